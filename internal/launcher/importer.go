package launcher

import (
	"encoding/json"
	"fmt"
	"strings"
)

// An importer's metadata may hold placeholders of the importer's own input
// parameters ({{$.inputs.parameters['x']}}), in keys and values alike. KFP
// resolves them as text inside each string (the SDK's local runner: a
// string value as it is, any other as JSON, which is the parameter's
// Tekton text), so the metadata the consumer sees is the template with the
// values the run gave. The compiler passes the template and each value to
// the consuming task's launcher (--artifact-metadata-param A:P=VALUE).

// MetadataParams groups --artifact-metadata-param values (ARTIFACT:PARAM
// keys) by artifact.
func MetadataParams(flags map[string]string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for key, v := range flags {
		art, param, ok := strings.Cut(key, ":")
		if !ok || art == "" || param == "" {
			return nil, fmt.Errorf("--artifact-metadata-param %q is not ARTIFACT:PARAM=VALUE", key)
		}
		if out[art] == nil {
			out[art] = map[string]string{}
		}
		out[art][param] = v
	}
	return out, nil
}

// ImporterMetadata fills the placeholders of an importer's metadata
// template with the importer's input values; a placeholder of any other
// kind, or of an input without a value, is an error.
func ImporterMetadata(template json.RawMessage, values map[string]string) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(template, &v); err != nil {
		return nil, fmt.Errorf("importer metadata: %w", err)
	}
	filled, err := fillMetadata(v, func(name string) (string, bool) {
		text, ok := values[name]
		return text, ok
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(filled)
}

// MetadataInputs are the input parameters an importer's metadata template
// names, sorted; a placeholder of anything else is an error.
func MetadataInputs(template json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(template, &v); err != nil {
		return nil, fmt.Errorf("importer metadata: %w", err)
	}
	seen := map[string]bool{}
	_, err := fillMetadata(v, func(name string) (string, bool) {
		seen[name] = true
		return "", true
	})
	return sortedKeys(seen), err
}

func fillMetadata(v any, value func(string) (string, bool)) (any, error) {
	switch x := v.(type) {
	case string:
		return fillText(x, value)
	case []any:
		for i := range x {
			f, err := fillMetadata(x[i], value)
			if err != nil {
				return nil, err
			}
			x[i] = f
		}
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			key, err := fillText(k, value)
			if err != nil {
				return nil, err
			}
			if out[key], err = fillMetadata(item, value); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

func fillText(s string, value func(string) (string, bool)) (string, error) {
	var err error
	out := placeholderRE.ReplaceAllStringFunc(s, func(p string) string {
		m := ioRE.FindStringSubmatch(p)
		if m == nil || m[1] != "inputs" || m[2] != "parameters" || m[5] != "" {
			err = fmt.Errorf("importer metadata: placeholder %s is not an input parameter's", p)
			return p
		}
		v, ok := value(m[3] + m[4])
		if !ok {
			err = fmt.Errorf("importer metadata: input parameter %q has no value", m[3]+m[4])
		}
		return v
	})
	return out, err
}
