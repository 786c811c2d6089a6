// Package launcher is the pure core of the KFP v2 executor protocol on
// Tekton: from what the compiler knows of a task (Spec) and what the run
// supplies (Runtime), it builds the task's ExecutorInput exactly as KFP's
// own launcher does, resolves the placeholders of the container's command
// and arguments (including {{$}}, the executor input of Python function
// components, and the structured Concat and IfPresent), and reads the
// outputs back (executor_output.json and output-parameter files) as the
// text Tekton results carry. No I/O: files are read through a function.
//
// The wire formats are KFP's: ExecutorInput and ExecutorOutput are
// pipelinespec messages (github.com/kubeflow/pipelines/api, pipeline_spec.proto),
// written and read with protojson as KFP's launcher does. Semantics follow
// KFP's launcher and the SDK's local runner (kfp/local placeholder_utils
// and executor_input_utils): an optional input with no value is absent,
// a default stands in for a missing value, a parameter placeholder of a
// non-string value is its JSON, an integer is written without a fraction.
package launcher

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/types/known/structpb"
)

// KFP's parameter types (pipelinespec.ParameterType_ParameterTypeEnum names).
const (
	TypeString          = "STRING"
	TypeInteger         = "NUMBER_INTEGER"
	TypeDouble          = "NUMBER_DOUBLE"
	TypeBoolean         = "BOOLEAN"
	TypeList            = "LIST"
	TypeStruct          = "STRUCT"
	TypeTaskFinalStatus = "TASK_FINAL_STATUS"
)

// ExecutorOutputFile is the name of the executor's output metadata file in
// Runtime.OutputDir (KFP's name).
const ExecutorOutputFile = "executor_output.json"

// Spec is what the compiler knows of one task: its component's interface
// and its container's command and arguments, placeholders unresolved.
type Spec struct {
	// Task is the KFP task name ({{$.pipeline_task_name}}).
	Task    string   `json:"task"`
	Inputs  Inputs   `json:"inputs,omitempty"`
	Outputs Outputs  `json:"outputs,omitempty"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Inputs are a component's input definitions.
type Inputs struct {
	Parameters map[string]Parameter `json:"parameters,omitempty"`
	Artifacts  map[string]Artifact  `json:"artifacts,omitempty"`
}

// Outputs are a component's output definitions.
type Outputs struct {
	Parameters map[string]Parameter `json:"parameters,omitempty"`
	Artifacts  map[string]Artifact  `json:"artifacts,omitempty"`
}

// Parameter declares a parameter: its KFP type, and for an input whether
// it may be left unset and its default (JSON), if any.
type Parameter struct {
	Type     string          `json:"type"`
	Optional bool            `json:"optional,omitempty"`
	Default  json.RawMessage `json:"default,omitempty"`
}

// Artifact declares an artifact by its KFP schema.
type Artifact struct {
	SchemaTitle   string `json:"schemaTitle"`
	SchemaVersion string `json:"schemaVersion,omitempty"`
	Optional      bool   `json:"optional,omitempty"`
	// List: the input is an artifact list (isArtifactList: dsl.Collected
	// artifacts of a loop, Input[List[Artifact]]), given in
	// Runtime.ArtifactLists.
	List bool `json:"list,omitempty"`
}

// Runtime is what the run supplies to one execution of a task.
type Runtime struct {
	// Parameters are the input parameters given a value, as text (as Tekton
	// params carry them: see Text); a missing key is an input not given.
	Parameters map[string]string
	// Artifacts are the input artifacts given, by input name;
	// ArtifactLists the artifact lists (Artifact.List), each in order.
	Artifacts     map[string]RuntimeArtifact
	ArtifactLists map[string][]RuntimeArtifact
	// OutputURI is the URI under which this execution's output artifacts
	// live, each at OutputURI/<name> (KFP: <pipeline root>/<run>/<task>).
	OutputURI string
	// OutputDir is a local directory for output-parameter files and
	// ExecutorOutputFile.
	OutputDir string
	// JobName, JobUID, TaskUID, PipelineRoot, JobCreateTime and
	// JobScheduleTime resolve KFP's constant placeholders.
	JobName, JobUID, TaskUID, PipelineRoot string
	JobCreateTime, JobScheduleTime         string
}

// RuntimeArtifact is an input artifact: where it is and what is known of it.
type RuntimeArtifact struct {
	URI string `json:"uri"`
	// Metadata is a JSON object (empty: none).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ExecutorInput builds the task's ExecutorInput: every input parameter
// with a value (given, else its default), typed as declared; every input
// artifact given; each output parameter's file in OutputDir and each output
// artifact at OutputURI/<name> with empty metadata. A required input with
// no value is an error naming it.
func ExecutorInput(spec Spec, rt Runtime) (*pipelinespec.ExecutorInput, error) {
	in := &pipelinespec.ExecutorInput_Inputs{
		ParameterValues: map[string]*structpb.Value{},
		Artifacts:       map[string]*pipelinespec.ArtifactList{},
	}
	for _, name := range sortedKeys(spec.Inputs.Parameters) {
		p := spec.Inputs.Parameters[name]
		var (
			v   *structpb.Value
			err error
		)
		switch text, given := rt.Parameters[name]; {
		case given:
			v, err = Value(p.Type, text)
		case len(p.Default) > 0 && string(p.Default) != "null":
			v, err = defaultValue(p.Type, p.Default)
		case p.Optional:
			continue // absent, as in KFP
		default:
			return nil, fmt.Errorf("task %q: input parameter %q has no value and no default", spec.Task, name)
		}
		if err != nil {
			return nil, fmt.Errorf("task %q: input parameter %q: %w", spec.Task, name, err)
		}
		in.ParameterValues[name] = v
	}
	for _, name := range sortedKeys(spec.Inputs.Artifacts) {
		list, err := inputArtifacts(spec, rt, name)
		if err != nil {
			return nil, err
		}
		if list != nil {
			in.Artifacts[name] = list
		}
	}
	out := &pipelinespec.ExecutorInput_Outputs{
		Parameters: map[string]*pipelinespec.ExecutorInput_OutputParameter{},
		Artifacts:  map[string]*pipelinespec.ArtifactList{},
		OutputFile: path.Join(rt.OutputDir, ExecutorOutputFile),
	}
	for _, name := range sortedKeys(spec.Outputs.Parameters) {
		out.Parameters[name] = &pipelinespec.ExecutorInput_OutputParameter{OutputFile: path.Join(rt.OutputDir, name)}
	}
	for _, name := range sortedKeys(spec.Outputs.Artifacts) {
		out.Artifacts[name] = &pipelinespec.ArtifactList{Artifacts: []*pipelinespec.RuntimeArtifact{{
			Name: name, Type: artifactType(spec.Outputs.Artifacts[name]),
			Uri: strings.TrimSuffix(rt.OutputURI, "/") + "/" + name, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{}},
		}}}
	}
	return &pipelinespec.ExecutorInput{Inputs: in, Outputs: out}, nil
}

// inputArtifacts is input artifact name's list in the executor input:
// the one artifact given, or every item of an artifact list (possibly
// none: a loop without iterations); nil for an optional input not given.
func inputArtifacts(spec Spec, rt Runtime, name string) (*pipelinespec.ArtifactList, error) {
	a := spec.Inputs.Artifacts[name]
	given := []RuntimeArtifact{rt.Artifacts[name]}
	_, ok := rt.Artifacts[name]
	if a.List {
		given, ok = rt.ArtifactLists[name]
	}
	if !ok {
		if a.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("task %q: input artifact %q was not given", spec.Task, name)
	}
	list := &pipelinespec.ArtifactList{Artifacts: []*pipelinespec.RuntimeArtifact{}}
	for i, g := range given {
		md, err := metadata(g.Metadata)
		if err != nil {
			return nil, fmt.Errorf("task %q: input artifact %q, item %d: metadata: %w", spec.Task, name, i, err)
		}
		list.Artifacts = append(list.Artifacts, &pipelinespec.RuntimeArtifact{Name: name, Type: artifactType(a), Uri: g.URI, Metadata: md})
	}
	return list, nil
}

func artifactType(a Artifact) *pipelinespec.ArtifactTypeSchema {
	return &pipelinespec.ArtifactTypeSchema{
		Kind:          &pipelinespec.ArtifactTypeSchema_SchemaTitle{SchemaTitle: a.SchemaTitle},
		SchemaVersion: a.SchemaVersion,
	}
}

func metadata(raw json.RawMessage) (*structpb.Struct, error) {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := s.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return s, nil
}

// Value reads a parameter's text (as Text writes it, and as Tekton params
// and results carry it) as a value of the KFP type typ: a STRING as it is;
// an integer, a double, a boolean, a list or a struct from its JSON. An
// unspecified type is a string.
func Value(typ, text string) (*structpb.Value, error) {
	switch typ {
	case TypeString, "":
		return structpb.NewStringValue(text), nil
	case TypeInteger:
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || n != math.Trunc(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return structpb.NewNumberValue(n), nil
	case TypeDouble:
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return structpb.NewNumberValue(n), nil
	case TypeBoolean:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil || (text != "true" && text != "false" && text != "True" && text != "False") {
			return nil, fmt.Errorf("%q is not a boolean (true or false)", text)
		}
		return structpb.NewBoolValue(b), nil
	case TypeTaskFinalStatus:
		v, err := Value(TypeStruct, text)
		if err != nil {
			return nil, err
		}
		return finalStatus(v), nil
	case TypeList, TypeStruct:
		v := &structpb.Value{}
		if err := v.UnmarshalJSON([]byte(text)); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %w", text, err)
		}
		if _, list := v.Kind.(*structpb.Value_ListValue); typ == TypeList && !list {
			return nil, fmt.Errorf("%q is not a JSON list", text)
		}
		if _, obj := v.Kind.(*structpb.Value_StructValue); typ != TypeList && !obj {
			return nil, fmt.Errorf("%q is not a JSON object", text)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown parameter type %q", typ)
}

// tektonStates are KFP's words for the states Tekton gives a task or a
// pipeline's tasks ($(tasks.status): Completed is success with some
// skipped; None is not finished: cancelled or timed out).
var tektonStates = map[string]string{
	"Succeeded": "SUCCEEDED", "Completed": "SUCCEEDED", "Failed": "FAILED", "None": "CANCELLED",
}

// finalStatus is a PipelineTaskFinalStatus with its state in KFP's words
// (SUCCEEDED, FAILED, CANCELLED); the compiler fills it with Tekton's.
func finalStatus(v *structpb.Value) *structpb.Value {
	fields := v.GetStructValue().GetFields()
	if state, ok := tektonStates[fields["state"].GetStringValue()]; ok {
		fields["state"] = structpb.NewStringValue(state)
		if state == "FAILED" && len(fields["error"].GetStructValue().GetFields()) == 0 {
			fields["error"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
				"message": structpb.NewStringValue("a task of the pipeline failed; its TaskRun has the reason"),
			}})
		}
	}
	return v
}

// defaultValue is a declared default (JSON, as the IR holds it) as a
// value of typ.
func defaultValue(typ string, raw json.RawMessage) (*structpb.Value, error) {
	v := &structpb.Value{}
	if err := v.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("default %s is not JSON: %w", raw, err)
	}
	if s, ok := v.Kind.(*structpb.Value_StringValue); ok && typ != TypeString && typ != "" {
		return Value(typ, s.StringValue) // an SDK may write a default as text
	}
	return Value(typ, Text(v))
}

// Text is a value as a parameter's text: a string as it is, a number
// without a fraction when it has none, a boolean as true or false, a list
// or struct as compact JSON (what a placeholder of it resolves to, and
// what a Tekton result carries).
func Text(v *structpb.Value) string {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue
	case *structpb.Value_NumberValue:
		n := k.NumberValue
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return strconv.FormatInt(int64(n), 10)
		}
		return strconv.FormatFloat(n, 'g', -1, 64)
	case *structpb.Value_BoolValue:
		return strconv.FormatBool(k.BoolValue)
	case *structpb.Value_NullValue, nil:
		return "null"
	}
	data, err := json.Marshal(v.AsInterface())
	if err != nil {
		return "null"
	}
	return string(data)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
