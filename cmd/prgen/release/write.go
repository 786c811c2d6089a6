package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		var enc yamlenc.Encoder
		return writeDocs(w, runs, func(spec map[string]any) any { return &yamlenc.Fragment{Value: spec} },
			func(out []byte, doc map[string]any, _ bool) ([]byte, error) { return enc.AppendDocument(out, doc) },
			nil)
	case "json":
		return writeDocs(w, runs, func(spec map[string]any) any {
			data, err := json.Marshal(spec)
			if err != nil {
				panic(err) // a tree of strings, numbers, maps and lists always marshals
			}
			return json.RawMessage(data)
		}, appendJSONItem, []byte("\n  ]\n}\n"))
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

// writeDocs turns each run into a tree, its pipelineSpec replaced by the
// node render made of the spec (once per distinct spec), appends each with
// appendDoc and streams the result to w.
func writeDocs(w io.Writer, runs []*tektonv1.PipelineRun, render func(map[string]any) any,
	appendDoc func([]byte, map[string]any, bool) ([]byte, error), trailer []byte) error {
	var (
		out      []byte
		lastSpec *tektonv1.PipelineSpec
		specNode any
	)
	if len(runs) == 0 && trailer != nil {
		_, err := io.WriteString(w, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n")
		return err
	}
	for i, pr := range runs {
		if spec := pr.Spec.PipelineSpec; spec != nil && spec != lastSpec && (lastSpec == nil || !reflect.DeepEqual(lastSpec, spec)) {
			value, err := tree(spec)
			if err != nil {
				return err
			}
			lastSpec, specNode = spec, render(value)
		}
		// The generic converter is slow on params (their values marshal
		// themselves); they are simple enough to convert directly.
		doc := printable(pr)
		doc.Spec.PipelineSpec, doc.Spec.Params = nil, nil
		value, err := tree(&doc)
		if err != nil {
			return err
		}
		spec := value["spec"].(map[string]any)
		if pr.Spec.PipelineSpec != nil {
			spec["pipelineSpec"] = specNode
		}
		if len(pr.Spec.Params) > 0 {
			spec["params"] = paramsTree(pr.Spec.Params)
		}
		if out, err = appendDoc(out, value, i == 0); err != nil {
			return err
		}
		if len(out) > 1<<20 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
	out = append(out, trailer...)
	_, err := w.Write(out)
	return err
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

// printed is a PipelineRun without status: a new run has none, and an empty
// "status: {}" would only be noise in what users pipe to kubectl.
type printed struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta        `json:"metadata"`
	Spec            tektonv1.PipelineRunSpec `json:"spec"`
}

func printable(pr *tektonv1.PipelineRun) printed {
	return printed{TypeMeta: pr.TypeMeta, Metadata: pr.ObjectMeta, Spec: pr.Spec}
}
