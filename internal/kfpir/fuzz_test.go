package kfpir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseCompile: Parse and Compile never panic; an IR they accept
// compiles to a Pipeline that passes Tekton's validation (as its admission
// webhook would run it) and fits the size limit.
func FuzzParseCompile(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	refused, err := filepath.Glob(filepath.Join("testdata", "refused", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range append(files, refused...) {
		if filepath.Base(file) == "demo.pipeline.golden.yaml" {
			continue // a compiled Pipeline, not an IR
		}
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
		f.Add(data, "file:///data/roots/")
	}
	for _, s := range []string{
		"", "---", "{}", "null", "[]", "root: {}", "schemaVersion: 2.1.0\nroot: {dag: {tasks: {}}}",
		"schemaVersion: 2.1.0\npipelineInfo: {name: x}\nroot: {dag: {tasks: {a: {componentRef: {name: missing}}}}}",
		`{"pipelineSpec": {"schemaVersion": "2.1.0"}}`, "a: &a [*a, *a]", "---\n---\n---\n",
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("schemaVersion: 2.1.0\nroot: {dag: {tasks: {}}}"), "s3://bucket/x")
	f.Add([]byte("schemaVersion: 2.1.0\nroot: {dag: {tasks: {}}}"), "file://relative")
	f.Fuzz(func(t *testing.T, data []byte, pipelineRoot string) {
		spec, err := Parse(data)
		if err != nil {
			if spec != nil {
				t.Fatalf("Parse returned a spec beside error %v", err)
			}
			return
		}
		p, err := Compile(spec, Options{Name: "fuzz", Namespace: "ns", LauncherImage: launcherImage, PipelineRoot: pipelineRoot})
		if err != nil {
			if p != nil {
				t.Fatalf("Compile returned a Pipeline beside error %v", err)
			}
			return
		}
		if verr := p.Validate(context.Background()); verr != nil {
			t.Fatalf("Compile returned a Pipeline Tekton refuses: %v", verr)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("the compiled Pipeline does not marshal: %v", err)
		}
		if len(b) > DefaultMaxBytes {
			t.Fatalf("the compiled Pipeline is %d bytes, above %d", len(b), DefaultMaxBytes)
		}
	})
}
