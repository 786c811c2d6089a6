package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/yamlenc"
)

// Write prints runs as a YAML stream ("yaml"), a v1 List ("json") or one
// "APP/VERSION" line per run ("name"). The first two render the embedded
// pipelineSpec once for all runs that share it: it is most of each
// document, and identical across a matrix.
func Write(w io.Writer, runs []*tektonv1.PipelineRun, format string) error {
	switch format {
	case "name":
		return writeNames(w, runs)
	case "yaml":
		return writeDocs(w, runs, func(spec map[string]any) any { return &yamlenc.Fragment{Value: spec} },
			func() appendFunc {
				var enc yamlenc.Encoder // one per worker: an Encoder is not safe for concurrent use
				return func(out []byte, doc map[string]any, _ bool) ([]byte, error) { return enc.AppendDocument(out, doc) }
			},
			nil)
	case "json":
		return writeDocs(w, runs, func(spec map[string]any) any {
			data, err := json.Marshal(spec)
			if err != nil {
				panic(err) // a tree of strings, numbers, maps and lists always marshals
			}
			return json.RawMessage(data)
		}, func() appendFunc { return appendJSONItem }, []byte("\n  ]\n}\n"))
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
}

// writeNames prints each run's stable identity, APP/VERSION. A run's name
// is given by the API server from its generateName when it is created, so
// kubectl's "pipelinerun.tekton.dev/NAME" cannot be known here, and printing
// the generateName prefix in that form would look like a name that exists.
// Application and version names are label values, so neither holds a "/"
// and the line splits unambiguously.
func writeNames(w io.Writer, runs []*tektonv1.PipelineRun) error {
	var out []byte
	for _, pr := range runs {
		out = append(out, pr.Labels[LabelApp]...)
		out = append(out, '/')
		out = append(out, pr.Labels[LabelVersion]...)
		out = append(out, '\n')
	}
	_, err := w.Write(out)
	return err
}

func appendJSONItem(out []byte, doc map[string]any, first bool) ([]byte, error) {
	if first {
		out = append(out, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [\n    "...)
	} else {
		out = append(out, ",\n    "...)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return out, err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "    ", "  "); err != nil {
		return out, err
	}
	return append(out, indented.Bytes()...), nil
}

// appendFunc appends one run's document (its tree) to out; first is true for
// the first run printed.
type appendFunc func(out []byte, doc map[string]any, first bool) ([]byte, error)

// writeDocs turns each run into a tree, its pipelineSpec replaced by the
// node render made of the spec (once per distinct spec and worker), appends
// each with an appendFunc from newAppend (one per worker) and streams the
// result to w in the runs' order.
func writeDocs(w io.Writer, runs []*tektonv1.PipelineRun, render func(map[string]any) any,
	newAppend func() appendFunc, trailer []byte) error {
	if len(runs) == 0 && trailer != nil {
		_, err := io.WriteString(w, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n")
		return err
	}
	// A chunk's document is ~600 KB: growing a fresh buffer for each was a
	// third of the time (copies, and the collector clearing and scanning).
	buffers := bufferPool{free: make(chan []byte, 3*workers())}
	// Idle docWriters, each with its encoder's rendered spec, for the next
	// chunk; at most one per worker is ever made.
	idle := make(chan *docWriter, workers())
	printChunk := func(lo, hi int) ([]byte, error) {
		var d *docWriter
		select {
		case d = <-idle:
		default:
			d = &docWriter{render: render, appendDoc: newAppend()}
		}
		defer func() { idle <- d }()
		out := buffers.get()
		for i := lo; i < hi; i++ {
			var err error
			if out, err = d.append(out, runs[i], i == 0); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	emit := func(out []byte) error {
		_, err := w.Write(out)
		buffers.put(out)
		return err
	}
	if err := inOrder(len(runs), runsPerChunk, workers(), printChunk, emit); err != nil {
		return err
	}
	_, err := w.Write(trailer)
	return err
}

// bufferPool recycles chunk buffers once written.
type bufferPool struct{ free chan []byte }

func (p bufferPool) get() []byte {
	select {
	case b := <-p.free:
		return b[:0]
	default:
		return nil
	}
}

func (p bufferPool) put(b []byte) {
	select {
	case p.free <- b:
	default:
	}
}

// docWriter prints runs one after another, remembering the last spec it
// rendered: the runs of a matrix share one.
type docWriter struct {
	render    func(map[string]any) any
	appendDoc appendFunc
	lastSpec  *tektonv1.PipelineSpec
	specNode  any
	lastRest  tektonv1.PipelineRunSpec
	restTree  map[string]any
}

func (d *docWriter) append(out []byte, pr *tektonv1.PipelineRun, first bool) ([]byte, error) {
	if spec := pr.Spec.PipelineSpec; spec != nil && spec != d.lastSpec && (d.lastSpec == nil || !reflect.DeepEqual(d.lastSpec, spec)) {
		value, err := tree(spec)
		if err != nil {
			return out, err
		}
		d.lastSpec, d.specNode = spec, d.render(value)
	}
	// The rest of the spec (service account, workspaces, timeouts) is the
	// same for every run of a matrix: converted once per worker, and again
	// only when it differs.
	rest := pr.Spec
	rest.PipelineSpec, rest.Params = nil, nil
	if d.restTree == nil || !reflect.DeepEqual(d.lastRest, rest) {
		value, err := tree(&rest)
		if err != nil {
			return out, err
		}
		d.lastRest, d.restTree = rest, value
	}
	spec := make(map[string]any, len(d.restTree)+2)
	for k, v := range d.restTree {
		spec[k] = v
	}
	if pr.Spec.PipelineSpec != nil {
		spec["pipelineSpec"] = d.specNode
	}
	// The generic converter is slow on params (their values marshal
	// themselves); they are simple enough to convert directly.
	if len(pr.Spec.Params) > 0 {
		spec["params"] = paramsTree(pr.Spec.Params)
	}
	metadata, err := tree(&pr.ObjectMeta)
	if err != nil {
		return out, err
	}
	// No status: a new run has none, and "status: {}" would only be noise in
	// what users pipe to kubectl.
	value := map[string]any{"metadata": metadata, "spec": spec}
	if pr.APIVersion != "" {
		value["apiVersion"] = pr.APIVersion
	}
	if pr.Kind != "" {
		value["kind"] = pr.Kind
	}
	return d.appendDoc(out, value, first)
}

func paramsTree(params tektonv1.Params) []any {
	out := make([]any, len(params))
	for i, p := range params {
		var value any
		switch p.Value.Type {
		case tektonv1.ParamTypeArray:
			items := make([]any, len(p.Value.ArrayVal))
			for j, v := range p.Value.ArrayVal {
				items[j] = v
			}
			value = items
		case tektonv1.ParamTypeObject:
			obj := make(map[string]any, len(p.Value.ObjectVal))
			for k, v := range p.Value.ObjectVal {
				obj[k] = v
			}
			value = obj
		default:
			value = p.Value.StringVal
		}
		out[i] = map[string]any{"name": p.Name, "value": value}
	}
	return out
}

// tree is v as encoding/json sees it (same field names and omissions).
func tree(v any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(v)
}
