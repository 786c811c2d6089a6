package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/yamlenc"
)

// Write prints runs as a YAML stream ("yaml"), a v1 List ("json") or one
// "APP/VERSION" line per run ("name"). The first two render the embedded
// pipelineSpec once for all runs that share it: it is most of each
// document, and identical across a matrix.
func Write(w io.Writer, runs []*Run, format string) error {
	switch format {
	case "name":
		return writeNames(w, runs)
	case "yaml":
		return writeDocs(w, runs, func() printer { return newYAMLPrinter() }, nil)
	case "json":
		if len(runs) == 0 {
			_, err := io.WriteString(w, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n")
			return err
		}
		return writeDocs(w, runs, func() printer { return &jsonPrinter{} }, []byte("\n  ]\n}\n"))
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
func writeNames(w io.Writer, runs []*Run) error {
	var out []byte
	for _, pr := range runs {
		out = append(out, pr.Labels.Get(LabelApp)...)
		out = append(out, '/')
		out = append(out, pr.Labels.Get(LabelVersion)...)
		out = append(out, '\n')
	}
	_, err := w.Write(out)
	return err
}

// A printer appends runs' documents to a chunk buffer. One per worker: it
// keeps what it rendered of the shape the runs share.
type printer interface {
	// append appends r's document to out; first is true for the first run
	// printed.
	append(out []byte, r *Run, first bool) ([]byte, error)
	// takeSplices returns the bytes left out of the chunk since the last
	// call, to be written in place (yamlenc.WriteSpliced).
	takeSplices() []yamlenc.Splice
}

// writeDocs prints the runs in chunks on every core, with a printer per
// worker, and streams the chunks to w in the runs' order, then trailer.
func writeDocs(w io.Writer, runs []*Run, newPrinter func() printer, trailer []byte) error {
	buffers := bufferPool{free: make(chan []byte, 3*workers())}
	// Idle printers for the next chunk; at most one per worker is made.
	idle := make(chan printer, workers())
	printChunk := func(lo, hi int) (printed, error) {
		var p printer
		select {
		case p = <-idle:
		default:
			p = newPrinter()
		}
		defer func() { idle <- p }()
		out := buffers.get()
		for i := lo; i < hi; i++ {
			var err error
			if out, err = p.append(out, runs[i], i == 0); err != nil {
				return printed{}, err
			}
		}
		return printed{out: out, splices: p.takeSplices()}, nil
	}
	emit := func(p printed) error {
		err := yamlenc.WriteSpliced(w, p.out, p.splices)
		buffers.put(p.out)
		return err
	}
	if err := inOrder(len(runs), runsPerChunk, workers(), printChunk, emit); err != nil {
		return err
	}
	_, err := w.Write(trailer)
	return err
}

// printed is a chunk of runs as printed: out, with splices put back in.
type printed struct {
	out     []byte
	splices []yamlenc.Splice
}

// bufferPool recycles chunk buffers once written: growing a fresh buffer
// for each chunk was a third of the time (copies, and the collector
// clearing and scanning).
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

// jsonPrinter prints runs as items of a v1 List, indented as kubectl does.
type jsonPrinter struct {
	lastShape *shape
	spec      json.RawMessage
}

func (p *jsonPrinter) append(out []byte, r *Run, first bool) ([]byte, error) {
	if r.shape != p.lastShape {
		data, err := json.Marshal(r.shape.tree)
		if err != nil {
			return out, err
		}
		p.lastShape, p.spec = r.shape, data
	}
	if first {
		out = append(out, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [\n    "...)
	} else {
		out = append(out, ",\n    "...)
	}
	data, err := json.Marshal(runTree(r, p.spec))
	if err != nil {
		return out, err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "    ", "  "); err != nil {
		return out, err
	}
	return append(out, indented.Bytes()...), nil
}

func (p *jsonPrinter) takeSplices() []yamlenc.Splice { return nil }

// runTree is r as encoding/json would give a tekton.dev/v1 PipelineRun with
// these fields (the same keys and omissions), with spec standing for the
// pipelineSpec. yamlPrinter writes the same document directly.
func runTree(r *Run, spec any) map[string]any {
	metadata := map[string]any{"generateName": r.GenerateName}
	if r.Namespace != "" {
		metadata["namespace"] = r.Namespace
	}
	if len(r.Labels) > 0 {
		labels := make(map[string]any, len(r.Labels))
		for _, kv := range r.Labels {
			labels[kv.Key] = kv.Value
		}
		metadata["labels"] = labels
	}
	// taskRunTemplate is a struct, never omitted: "{}" without a service
	// account, as the typed PipelineRun always printed it.
	template := map[string]any{}
	if r.ServiceAccountName != "" {
		template["serviceAccountName"] = r.ServiceAccountName
	}
	runSpec := map[string]any{"pipelineSpec": spec, "taskRunTemplate": template}
	if len(r.Params) > 0 {
		params := make([]any, len(r.Params))
		for i, p := range r.Params {
			params[i] = map[string]any{"name": p.Name, "value": p.Value}
		}
		runSpec["params"] = params
	}
	if len(r.Workspaces) > 0 {
		workspaces := make([]any, len(r.Workspaces))
		for i, w := range r.Workspaces {
			workspaces[i] = map[string]any{"name": w.Name, "secret": map[string]any{"secretName": w.Secret}}
		}
		runSpec["workspaces"] = workspaces
	}
	// No status: a new run has none, and "status: {}" would only be noise in
	// what users pipe to kubectl.
	return map[string]any{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": metadata, "spec": runSpec}
}
