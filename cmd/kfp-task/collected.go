package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// Collected outputs of loops (dsl.Collected) beyond flat parameter lists:
// the lists of lists of nested loops (--item-shape) and artifact lists
// (--artifact-item, --artifact-rest), and the single artifacts a loop over
// an artifact list gives each iteration (--artifact-json).

// collectedFlags are launch's flags for nested lists and artifact lists.
type collectedFlags struct {
	shapes        namedFlags
	artifactItems listFlags
	artifactRest  string
	artifactJSON  namedFlags
}

func (c *collectedFlags) register(fs *flag.FlagSet) {
	c.shapes = namedFlags{}
	fs.Var(c.shapes, "item-shape", "NAME=JSON: how the items of NAME nest: a count is a list of that many items, a list of shapes a list of such lists ([3,3]: two lists of three)")
	fs.Var(&c.artifactItems, "artifact-item", "NAME=JSON: the next item ({uri, metadata}) of the input artifact list NAME; repeatable, in order")
	c.artifactJSON = namedFlags{}
	fs.Var(c.artifactJSON, "artifact-json", "NAME=JSON: input artifact NAME as its producer reported it ({uri, metadata}): a loop's item, a dsl.OneOf selector's result; repeatable")
	fs.StringVar(&c.artifactRest, "artifact-rest", "", "NAME: the items of the input artifact list NAME are the arguments after -- ({uri, metadata} each)")
}

// nestLists regroups the collected lists given a shape (the list of lists
// KFP collects over nested loops); lists holds each as JSON text.
func nestLists(lists map[string]string, shapes namedFlags) error {
	for name, text := range shapes {
		flat, ok := lists[name]
		if !ok {
			return fmt.Errorf("--item-shape %s for no collected input", name)
		}
		var shape any
		if err := json.Unmarshal([]byte(text), &shape); err != nil {
			return fmt.Errorf("--item-shape %s: %w", name, err)
		}
		var items []any
		if err := json.Unmarshal([]byte(flat), &items); err != nil {
			return err
		}
		nested, rest, err := nest(items, shape)
		if err == nil && len(rest) > 0 {
			err = fmt.Errorf("%d items more than the shape holds", len(rest))
		}
		if err != nil {
			return fmt.Errorf("input %q: --item-shape %s: %w", name, text, err)
		}
		data, err := json.Marshal(nested)
		if err != nil {
			return err
		}
		lists[name] = string(data)
	}
	return nil
}

// nest takes from items the list shape describes, and returns it with the
// items left.
func nest(items []any, shape any) (any, []any, error) {
	switch s := shape.(type) {
	case float64:
		n := int(s)
		if float64(n) != s || n < 0 {
			return nil, nil, fmt.Errorf("%v is not a count", s)
		}
		if n > len(items) {
			return nil, nil, errors.New("fewer items than the shape holds")
		}
		return append([]any{}, items[:n]...), items[n:], nil
	case []any:
		out := []any{}
		for _, sub := range s {
			v, rest, err := nest(items, sub)
			if err != nil {
				return nil, nil, err
			}
			out, items = append(out, v), rest
		}
		return out, items, nil
	}
	return nil, nil, fmt.Errorf("%v is neither a count nor a list of shapes", shape)
}

// artifactLists are the input artifact lists of spec (launcher.Artifact.List):
// each --artifact-item of it in order, or for --artifact-rest the arguments
// after --, each an artifact's {uri, metadata} (what --artifact-result of
// its producer wrote). A required list given no item is empty (a loop
// without iterations); an optional one is absent.
func (c *collectedFlags) artifactLists(spec launcher.Spec, rest []string) (map[string][]launcher.RuntimeArtifact, error) {
	texts := map[string][]string{}
	for name, a := range spec.Inputs.Artifacts {
		if a.List && !a.Optional {
			texts[name] = []string{}
		}
	}
	for _, item := range c.artifactItems {
		name, text, ok := strings.Cut(item, "=")
		if a := spec.Inputs.Artifacts[name]; !ok || !a.List {
			return nil, fmt.Errorf("--artifact-item %q: want NAME=JSON for an input artifact list NAME", item)
		}
		texts[name] = append(texts[name], text)
	}
	if c.artifactRest != "" {
		if a := spec.Inputs.Artifacts[c.artifactRest]; !a.List || len(texts[c.artifactRest]) > 0 {
			return nil, fmt.Errorf("--artifact-rest %s: not an input artifact list, or given --artifact-item too", c.artifactRest)
		}
		texts[c.artifactRest] = rest
	}
	out := map[string][]launcher.RuntimeArtifact{}
	for name, list := range texts {
		out[name] = make([]launcher.RuntimeArtifact, 0, len(list))
		for i, text := range list {
			var a launcher.RuntimeArtifact
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil || a.URI == "" {
				return nil, fmt.Errorf("input artifact list %q, item %d: %q is not an artifact's {uri, metadata}", name, i, text)
			}
			out[name] = append(out[name], a)
		}
	}
	return out, nil
}

// jsonArtifacts adds to artifacts each --artifact-json: an input artifact
// (not a list) given as its producer reported it.
func (c *collectedFlags) jsonArtifacts(spec launcher.Spec, artifacts map[string]launcher.RuntimeArtifact) error {
	for _, name := range slices.Sorted(maps.Keys(c.artifactJSON)) {
		text := c.artifactJSON[name]
		a, ok := spec.Inputs.Artifacts[name]
		if _, dup := artifacts[name]; !ok || a.List || dup {
			return fmt.Errorf("--artifact-json %s: not an input artifact, a list, or given --artifact too", name)
		}
		var ra launcher.RuntimeArtifact
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ra); err != nil || ra.URI == "" {
			return fmt.Errorf("--artifact-json %s: %q is not an artifact's {uri, metadata}", name, text)
		}
		artifacts[name] = ra
	}
	return nil
}
