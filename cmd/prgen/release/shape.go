package release

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines/shapes"
)

// shape is the release pipelineSpec as prgen prints it: the file as written,
// which is already in the form Tekton's defaulting gives it (shape_test.go
// proves it), so prgen needs none of Tekton's packages to print it. Those
// packages take most of a short prgen's time just to initialise (~30 ms of a
// 57 ms start, 2026-12-07), and prgen's output is still held to Tekton's own
// validation by its tests and by a server dry run in make demo.
type shape struct {
	// tree is the pipelineSpec as encoding/json would give it; shared by
	// every run, never modified.
	tree map[string]any
	// params are the shape's params in declaration order.
	params []shapeParam
	// values[i] gives params[i] its value for a pair; nil leaves it to its
	// default (releaseParams, bound once by loadReleaseShape).
	values []paramValue
}

type shapeParam struct {
	name string
	// fallback is the default value; hasDefault says whether there is one.
	fallback   string
	hasDefault bool
}

var (
	releaseOnce  sync.Once
	releaseShape *shape
	releaseErr   error
)

// loadReleaseShape reads the release shape once per process.
func loadReleaseShape() (*shape, error) {
	releaseOnce.Do(func() {
		data, err := shapes.Read(shapes.Release)
		if err == nil {
			releaseShape, err = parseShape(data)
		}
		if err == nil {
			err = releaseShape.bind(releaseParams)
		}
		if err != nil {
			releaseErr = fmt.Errorf("pipeline shape %s: %w", shapes.Release, err)
		}
	})
	return releaseShape, releaseErr
}

// parseShape decodes a shape whose params are all strings (every release
// param is one: a matrix holds strings).
func parseShape(data []byte) (*shape, error) {
	var tree map[string]any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	list, _ := tree["params"].([]any)
	s := &shape{tree: tree, params: make([]shapeParam, 0, len(list))}
	for i, item := range list {
		p, _ := item.(map[string]any)
		name, _ := p["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("params[%d]: no name", i)
		}
		if typ, _ := p["type"].(string); typ != "string" {
			return nil, fmt.Errorf("param %q: type %q, want string written out", name, typ)
		}
		sp := shapeParam{name: name}
		if d, ok := p["default"]; ok {
			if sp.fallback, ok = d.(string); !ok {
				return nil, fmt.Errorf("param %q: default %v is not a string", name, d)
			}
			sp.hasDefault = true
		}
		s.params = append(s.params, sp)
	}
	return s, nil
}

// bind lines values up with the shape's params, refusing a value for a
// param the shape does not declare.
func (s *shape) bind(values map[string]paramValue) error {
	s.values = make([]paramValue, len(s.params))
	bound := 0
	for i, p := range s.params {
		if s.values[i] = values[p.name]; s.values[i] != nil {
			bound++
		}
	}
	if bound == len(values) {
		return nil
	}
	var undeclared []string
	for name := range values {
		if !slices.ContainsFunc(s.params, func(p shapeParam) bool { return p.name == name }) {
			undeclared = append(undeclared, name)
		}
	}
	slices.Sort(undeclared)
	return fmt.Errorf("does not declare params %s, which prgen gives values (declared: %s)", strings.Join(undeclared, ", "), s.paramNames())
}

func (s *shape) paramNames() string {
	names := make([]string, len(s.params))
	for i, p := range s.params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// defaultOf is the named param's default, or "" when it has none.
func (s *shape) defaultOf(name string) string {
	for _, p := range s.params {
		if p.name == name {
			return p.fallback
		}
	}
	return ""
}
