package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Results are what an execution produced, as the launcher hands them on.
type Results struct {
	// Parameters are the output parameters as text (Text), by name.
	Parameters map[string]string
	// Artifacts are the output artifacts with the metadata the executor
	// reported, by name.
	Artifacts map[string]RuntimeArtifact
}

// Collect reads an execution's outputs as KFP's launcher does: the
// executor output file (ExecutorOutput JSON), when the executor wrote one,
// gives parameter values and artifact metadata; an output parameter it
// does not give is read from its own output file (text: a STRING as
// written, other types their JSON, as the SDK writes them). An output
// parameter found in neither is an error naming it; so is a value that is
// not of its declared type. readFile returns an error wrapping
// fs.ErrNotExist for a file that is not there.
func Collect(spec Spec, ei *pipelinespec.ExecutorInput, readFile func(string) ([]byte, error)) (Results, error) {
	res := Results{Parameters: map[string]string{}, Artifacts: map[string]RuntimeArtifact{}}
	out := &pipelinespec.ExecutorOutput{}
	data, err := readFile(ei.GetOutputs().GetOutputFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return res, fmt.Errorf("task %q: reading the executor output: %w", spec.Task, err)
	case len(strings.TrimSpace(string(data))) > 0:
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, out); err != nil {
			return res, fmt.Errorf("task %q: the executor output %s is not an ExecutorOutput: %w", spec.Task, ei.GetOutputs().GetOutputFile(), err)
		}
	}
	for _, name := range sortedKeys(spec.Outputs.Parameters) {
		typ := spec.Outputs.Parameters[name].Type
		v, ok := out.GetParameterValues()[name]
		if !ok {
			file := ei.GetOutputs().GetParameters()[name].GetOutputFile()
			text, err := readFile(file)
			if errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("task %q: output parameter %q was not written (neither in %s nor in %s)", spec.Task, name, ExecutorOutputFile, file)
			}
			if err != nil {
				return res, fmt.Errorf("task %q: output parameter %q: %w", spec.Task, name, err)
			}
			if v, err = Value(typ, string(text)); err != nil {
				return res, fmt.Errorf("task %q: output parameter %q: %w", spec.Task, name, err)
			}
		} else if v, err = Value(typ, Text(v)); err != nil {
			return res, fmt.Errorf("task %q: output parameter %q in %s: %w", spec.Task, name, ExecutorOutputFile, err)
		}
		res.Parameters[name] = Text(v)
	}
	for _, name := range sortedKeys(spec.Outputs.Artifacts) {
		a := ei.GetOutputs().GetArtifacts()[name].GetArtifacts()[0]
		md := a.GetMetadata()
		uri := a.GetUri()
		if reported := out.GetArtifacts()[name].GetArtifacts(); len(reported) > 0 {
			md = mergeMetadata(md, reported[0].GetMetadata())
			if u := reported[0].GetUri(); u != "" {
				uri = u
			}
		}
		data, err := json.Marshal(md.AsMap())
		if err != nil {
			return res, fmt.Errorf("task %q: output artifact %q: metadata: %w", spec.Task, name, err)
		}
		res.Artifacts[name] = RuntimeArtifact{URI: uri, Metadata: data}
	}
	return res, nil
}

func mergeMetadata(base, reported *structpb.Struct) *structpb.Struct {
	merged := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for k, v := range base.GetFields() {
		merged.Fields[k] = v
	}
	for k, v := range reported.GetFields() {
		merged.Fields[k] = v
	}
	return merged
}
