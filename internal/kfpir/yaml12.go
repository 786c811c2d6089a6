package kfpir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// yamlToJSON reads a YAML document with YAML 1.2's types, as the KFP SDK
// writes it (PyYAML reads and writes its own output consistently): y, n,
// yes, no, on and off are strings, as keys and as values, not the YAML
// 1.1 booleans a 1.1 reader makes of them (a parameter named y would
// become "true"); a timestamp is its text; a key is its text. The JSON it
// gives keeps mapping order.
func yamlToJSON(data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return []byte("null"), nil
	}
	w := &jsonWriter{}
	if err := w.write(doc.Content[0], 0); err != nil {
		return nil, err
	}
	return w.b.Bytes(), nil
}

// Bounds on a document: nesting, and nodes written, which aliases can
// multiply (a few lines of anchors can stand for billions of nodes).
const (
	maxYAMLDepth = 200
	maxYAMLNodes = 1 << 18
)

type jsonWriter struct {
	b     bytes.Buffer
	nodes int
}

func (w *jsonWriter) write(n *yaml.Node, depth int) error {
	b := &w.b
	if depth > maxYAMLDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxYAMLDepth)
	}
	if w.nodes++; w.nodes > maxYAMLNodes {
		return fmt.Errorf("line %d: more than %d values (aliases included)", n.Line, maxYAMLNodes)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return w.write(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return w.write(n.Content[0], depth+1)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := w.write(c, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		first := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(k.Value)
			b.Write(key)
			b.WriteByte(':')
			if err := w.write(v, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.ScalarNode:
		return writeScalar(b, n)
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		v, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			b.WriteString(strconv.FormatInt(i, 10))
		} else if u, err := strconv.ParseUint(strings.TrimPrefix(n.Value, "+"), 0, 64); err == nil {
			b.WriteString(strconv.FormatUint(u, 10))
		} else {
			return fmt.Errorf("line %d: %q is not an integer JSON can hold", n.Line, n.Value)
		}
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
		}
		// The text as written, when it is valid JSON (keeps 1.0 as 1.0).
		if json.Valid([]byte(n.Value)) {
			b.WriteString(n.Value)
		} else {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	default: // !!str, !!timestamp, !!binary and any other tag: the text
		data, _ := json.Marshal(n.Value)
		b.Write(data)
	}
	return nil
}
