package main

import (
	"errors"
	"fmt"
	"os"
)

// functions are the Python functions the fixture knows, by name, written
// as the SDK's executor calls them: keyword arguments from the input
// parameterValues (a missing optional one is None, here nil), output
// artifacts whose path it writes; the return value is Output.
var functions = map[string]func(params map[string]any, outputs map[string]*artifact) (any, error){
	// def add(a: float, b: float = 1.0) -> float
	"add": func(p map[string]any, _ map[string]*artifact) (any, error) {
		a, ok := p["a"].(float64)
		if !ok {
			return nil, fmt.Errorf("TypeError: a is %T", p["a"])
		}
		b, ok := p["b"].(float64)
		if !ok {
			return nil, fmt.Errorf("TypeError: b is %T", p["b"])
		}
		return a + b, nil
	},
	// def report(total: float, note: Optional[str] = None) -> str
	"report": func(p map[string]any, _ map[string]*artifact) (any, error) {
		note := "None"
		if n, ok := p["note"].(string); ok {
			note = n
		}
		return fmt.Sprintf("total=%v note=%s", p["total"], note), nil
	},
	// def save(total: float, summary: Output[Dataset])
	"save": func(p map[string]any, out map[string]*artifact) (any, error) {
		a, ok := out["summary"]
		if !ok {
			return nil, errors.New("no summary output")
		}
		path, err := a.path()
		if err != nil {
			return nil, err
		}
		a.Metadata["total"] = p["total"]
		return nil, os.WriteFile(path, []byte(fmt.Sprintf("total %v\n", p["total"])), 0o644)
	},
	// def fail(): raise ValueError("asked to fail")
	"fail": func(map[string]any, map[string]*artifact) (any, error) {
		return nil, errors.New("ValueError: asked to fail")
	},
}
