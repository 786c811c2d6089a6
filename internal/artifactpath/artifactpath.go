// Package artifactpath selects a run's output artifacts by the paths of a
// run spec's artifacts[]: COMPONENT:OUTPUT:INDEX[FILTER] (the API doc of
// OutputArtifact.Path). The shapes follow kfp-operator's run-completion
// events: a run's components, each with named outputs, each a list of
// artifacts with a URI and metadata. FILTER is comparisons of an artifact's
// metadata joined by &&: KEY OP VALUE, OP one of == != < <= > >=, VALUE a
// number, a quoted string ('…' or "…"), true or false. Numbers compare
// numerically, strings and booleans only with == and !=; a missing key or
// a value of another type never matches. INDEX counts the artifacts the
// filter keeps.
package artifactpath

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Component is one component (task) of a finished run and its outputs.
type Component struct {
	Name    string
	Outputs []Output
}

// Output is one named output artifact of a component: the artifacts it
// produced.
type Output struct {
	Name      string
	Artifacts []Artifact
}

// Artifact is one stored artifact.
type Artifact struct {
	URI      string
	Metadata map[string]any
}

// Path is a parsed artifact path.
type Path struct {
	Component, Output string
	Index             int
	Filter            []Comparison
}

// Comparison is one KEY OP VALUE of a filter; Value is a float64, string
// or bool.
type Comparison struct {
	Key, Op string
	Value   any
}

var (
	pathRE       = regexp.MustCompile(`^([^:\[\]]+):([^:\[\]]+):([0-9]+)(?:\[(.*)\])?$`)
	comparisonRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?[0-9]+(?:\.[0-9]+)?|true|false)\s*$`)
)

// Parse reads an artifact path, saying what is wrong with a malformed one.
func Parse(path string) (Path, error) {
	m := pathRE.FindStringSubmatch(path)
	if m == nil {
		return Path{}, fmt.Errorf("artifact path %q: want COMPONENT:OUTPUT:INDEX or COMPONENT:OUTPUT:INDEX[FILTER]", path)
	}
	index, err := strconv.Atoi(m[3])
	if err != nil {
		return Path{}, fmt.Errorf("artifact path %q: index %s is too large", path, m[3])
	}
	p := Path{Component: m[1], Output: m[2], Index: index}
	if m[4] == "" && strings.HasSuffix(path, "]") {
		return Path{}, fmt.Errorf("artifact path %q: empty filter", path)
	}
	if m[4] != "" {
		for _, part := range splitAnd(m[4]) {
			c, err := parseComparison(part)
			if err != nil {
				return Path{}, fmt.Errorf("artifact path %q: %w", path, err)
			}
			p.Filter = append(p.Filter, c)
		}
	}
	return p, nil
}

// splitAnd splits a filter at the && that are outside quotes.
func splitAnd(filter string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(filter); i++ {
		switch c := filter[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '&' && i+1 < len(filter) && filter[i+1] == '&':
			parts = append(parts, filter[start:i])
			start = i + 2
			i++
		}
	}
	return append(parts, filter[start:])
}

func parseComparison(s string) (Comparison, error) {
	m := comparisonRE.FindStringSubmatch(s)
	if m == nil {
		return Comparison{}, fmt.Errorf("filter %q: want KEY OP VALUE (OP one of == != < <= > >=; VALUE a number, a quoted string, true or false)", strings.TrimSpace(s))
	}
	c := Comparison{Key: m[1], Op: m[2]}
	switch v := m[3]; {
	case v == "true" || v == "false":
		c.Value = v == "true"
	case v[0] == '\'' || v[0] == '"':
		c.Value = v[1 : len(v)-1]
	default:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Comparison{}, err
		}
		c.Value = f
	}
	if _, isNumber := c.Value.(float64); !isNumber && c.Op != "==" && c.Op != "!=" {
		return Comparison{}, fmt.Errorf("filter %q: %s compares numbers only", strings.TrimSpace(s), c.Op)
	}
	return c, nil
}

// Select returns the URI the path names in a run's components, and whether
// there is one.
func Select(p Path, components []Component) (string, bool) {
	for _, c := range components {
		if c.Name != p.Component {
			continue
		}
		for _, o := range c.Outputs {
			if o.Name != p.Output {
				continue
			}
			n := 0
			for _, a := range o.Artifacts {
				if !p.matches(a.Metadata) {
					continue
				}
				if n == p.Index {
					return a.URI, true
				}
				n++
			}
		}
	}
	return "", false
}

func (p Path) matches(metadata map[string]any) bool {
	for _, c := range p.Filter {
		if !c.holds(metadata) {
			return false
		}
	}
	return true
}

func (c Comparison) holds(metadata map[string]any) bool {
	got, ok := metadata[c.Key]
	if !ok {
		return false
	}
	switch want := c.Value.(type) {
	case float64:
		f, ok := number(got)
		if !ok {
			return false
		}
		switch c.Op {
		case "==":
			return f == want
		case "!=":
			return f != want
		case "<":
			return f < want
		case "<=":
			return f <= want
		case ">":
			return f > want
		case ">=":
			return f >= want
		}
	case string, bool:
		if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
			return false
		}
		return (got == want) == (c.Op == "==")
	}
	return false
}

// number reads the numbers JSON decoding produces.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}
