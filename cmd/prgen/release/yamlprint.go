package release

import (
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/yamlenc"
)

// yamlPrinter writes a run's document as yamlenc would write runTree's tree
// (sorted keys, the same quoting), but straight from the Run: building the
// tree's maps for every run was most of a 10,000-run prgen's time. The
// shared pipelineSpec is left out of the chunk and written from its one
// rendering (yamlenc.Encoder.LeaveFragments). TestYAMLPrinterWritesTheTree
// holds the two to the same bytes.
type yamlPrinter struct {
	enc       *yamlenc.Encoder
	lastShape *shape
	spec      *yamlenc.Fragment
}

func newYAMLPrinter() *yamlPrinter {
	return &yamlPrinter{enc: &yamlenc.Encoder{LeaveFragments: true}}
}

func (p *yamlPrinter) takeSplices() []yamlenc.Splice { return p.enc.TakeSplices() }

func (p *yamlPrinter) append(out []byte, r *Run, _ bool) ([]byte, error) {
	if r.shape != p.lastShape {
		p.lastShape, p.spec = r.shape, &yamlenc.Fragment{Value: r.shape.tree}
	}
	out = append(out, "---\napiVersion: tekton.dev/v1\nkind: PipelineRun\nmetadata:\n  generateName: "...)
	out = line(out, r.GenerateName)
	if len(r.Labels) > 0 {
		out = append(out, "  labels:\n"...)
		for _, kv := range r.Labels { // sorted by key, as yamlenc sorts a map's keys
			out = append(out, "    "...)
			out = yamlenc.AppendString(out, kv.Key)
			out = append(out, ": "...)
			out = line(out, kv.Value)
		}
	}
	if r.Namespace != "" {
		out = append(out, "  namespace: "...)
		out = line(out, r.Namespace)
	}
	out = append(out, "spec:\n"...)
	if len(r.Params) > 0 {
		out = append(out, "  params:\n"...)
		for _, param := range r.Params {
			out = append(out, "  - name: "...)
			out = line(out, param.Name)
			out = append(out, "    value: "...)
			out = line(out, param.Value)
		}
	}
	out = append(out, "  pipelineSpec:\n"...)
	out, err := p.enc.AppendBlock(out, p.spec, 4)
	if err != nil {
		return out, err
	}
	if r.ServiceAccountName == "" {
		out = append(out, "  taskRunTemplate: {}\n"...)
	} else {
		out = append(out, "  taskRunTemplate:\n    serviceAccountName: "...)
		out = line(out, r.ServiceAccountName)
	}
	if len(r.Workspaces) > 0 {
		out = append(out, "  workspaces:\n"...)
		for _, w := range r.Workspaces {
			out = append(out, "  - name: "...)
			out = line(out, w.Name)
			out = append(out, "    secret:\n      secretName: "...)
			out = line(out, w.Secret)
		}
	}
	return out, nil
}

// line appends s as a scalar and ends the line.
func line(out []byte, s string) []byte {
	return append(yamlenc.AppendString(out, s), '\n')
}
