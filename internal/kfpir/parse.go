package kfpir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// docSeparator splits a multi-document YAML stream.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Parse reads a compiled KFP v2 pipeline: the PipelineSpec as YAML or JSON,
// optionally followed by a second YAML document holding the platform spec,
// or a PipelineJob ({"pipelineSpec": ..., "runtimeConfig": ...}). The
// document is decoded with KFP's own protobuf types (pipelinespec, by
// protojson, which refuses unknown fields) and converted into the compiler's
// model; fields of those types that the model does not hold are refused when
// set. Only schemaVersion 2.x is accepted.
func Parse(data []byte) (*PipelineSpec, error) {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("kfp IR: empty document")
	}
	if len(docs) > 2 {
		return nil, fmt.Errorf("kfp IR: %d YAML documents; expected the pipeline spec and at most a platform spec", len(docs))
	}
	main, err := yamlToJSON(docs[0])
	if err != nil {
		return nil, fmt.Errorf("kfp IR: not YAML or JSON: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(main, &top); err != nil {
		return nil, fmt.Errorf("kfp IR: the document is not an object: %w", err)
	}
	main, top, runtimeConfig, err := unwrapJob(main, top)
	if err != nil {
		return nil, err
	}
	var version struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	_ = json.Unmarshal(main, &version)
	if err := checkSchemaVersion(version.SchemaVersion); err != nil {
		return nil, err
	}
	main = dropTaskNames(main)
	pb := &pipelinespec.PipelineSpec{}
	if err := protojson.Unmarshal(main, pb); err != nil {
		return nil, fmt.Errorf("kfp IR: unsupported or malformed pipeline spec: %w", locateError(main, err))
	}
	// PipelineSpec.deploymentSpec is a google.protobuf.Struct in the proto;
	// its content is a PipelineDeploymentConfig.
	deploy := &pipelinespec.PipelineDeploymentConfig{}
	if raw := top["deploymentSpec"]; len(raw) > 0 && string(raw) != "null" {
		if err := protojson.Unmarshal(raw, deploy); err != nil {
			return nil, fmt.Errorf("kfp IR: unsupported or malformed pipeline spec: deploymentSpec: %w", locateExecutorError(raw, err))
		}
	}
	spec, err := fromProto(pb, deploy)
	if err != nil {
		return nil, err
	}
	spec.RuntimeConfig = runtimeConfig
	if len(docs) == 2 {
		// The platform spec (a pipelinespec.PlatformSpec) is refused whatever
		// it holds; Compile names its features.
		platform, err := yamlToJSON(docs[1])
		if err != nil {
			return nil, fmt.Errorf("kfp IR: platform spec document: %w", err)
		}
		spec.PlatformSpec = platform
	}
	if spec.Root == nil {
		return nil, errors.New("kfp IR: root is missing")
	}
	return spec, nil
}

func checkSchemaVersion(v string) error {
	if v == "" {
		return errors.New("kfp IR: schemaVersion is missing (is this a KFP v2 compiled pipeline?)")
	}
	if v != "2" && !strings.HasPrefix(v, "2.") {
		return fmt.Errorf("kfp IR: schemaVersion %q is not supported; only 2.x (KFP v2 SDK) pipelines are", v)
	}
	return nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// protoErrorHead is the head of a protojson error: "proto:" (followed by a
// space or, at random, a no-break space) and the position in the JSON that
// Parse made from the YAML, which means nothing to the document's author.
var protoErrorHead = regexp.MustCompile(`^proto:[\s\x{00a0}]*(\(line \d+:\d+\):[\s\x{00a0}]*)?`)

// protoError rewrites a protojson error into a stable message (protobuf
// deliberately varies its error text); an unknown field reads
// `json: unknown field "x"`.
func protoError(err error) error {
	msg := protoErrorHead.ReplaceAllString(err.Error(), "")
	if strings.HasPrefix(msg, "unknown field ") {
		msg = "json: " + msg
	}
	return errors.New(msg)
}

// newerFields are fields of the KFP IR that the pinned pipelinespec version
// does not declare (newer SDKs write them), so protojson reports them as
// unknown; Parse refuses them as the unsupported features they are.
var newerFields = map[string]string{
	// in a task
	"cacheKey":               "caching with a cache key",
	"platformConfig":         "task platform configuration",
	"taskConfigPassthroughs": "task platform configuration",
	"componentConfig":        "task platform configuration",
	"runtimeArtifact":        "runtime artifact",
}

// unknownFieldRE finds the field protojson reports as unknown.
var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]*)"`)

// dagShape finds the tasks of a DAG in the JSON of a component.
type dagShape struct {
	DAG *struct {
		Tasks map[string]json.RawMessage `json:"tasks"`
	} `json:"dag"`
}

// locateError names the task or component that makes the PipelineSpec fail
// to decode, by decoding the tasks of the root and of every component, then
// every component, alone.
func locateError(doc []byte, err error) error {
	var shape struct {
		Root       json.RawMessage            `json:"root"`
		Components map[string]json.RawMessage `json:"components"`
	}
	_ = json.Unmarshal(doc, &shape)
	names := []string{"root"}
	comps := []json.RawMessage{shape.Root}
	for _, name := range sortedKeys(shape.Components) {
		names = append(names, name)
		comps = append(comps, shape.Components[name])
	}
	for _, raw := range comps {
		var d dagShape
		if json.Unmarshal(raw, &d) != nil || d.DAG == nil {
			continue
		}
		for _, name := range sortedKeys(d.DAG.Tasks) {
			if terr := protojson.Unmarshal(d.DAG.Tasks[name], &pipelinespec.PipelineTaskSpec{}); terr != nil {
				if m := unknownFieldRE.FindStringSubmatch(terr.Error()); m != nil && newerFields[m[1]] != "" {
					return unsupported(name, newerFields[m[1]], "field %s", m[1])
				}
				return fmt.Errorf("task %q: %w", name, protoError(terr))
			}
		}
	}
	for i, raw := range comps {
		if len(raw) == 0 {
			continue
		}
		if cerr := protojson.Unmarshal(raw, &pipelinespec.ComponentSpec{}); cerr != nil {
			if m := unknownFieldRE.FindStringSubmatch(cerr.Error()); m != nil && m[1] == "taskConfigPassthroughs" {
				return unsupported("", "component platform configuration", "component %s: field %s", names[i], m[1])
			}
			return fmt.Errorf("component %q: %w", names[i], protoError(cerr))
		}
	}
	return protoError(err)
}

// locateExecutorError names the executor that makes the deployment spec fail
// to decode.
func locateExecutorError(doc []byte, err error) error {
	var shape struct {
		Executors map[string]json.RawMessage `json:"executors"`
	}
	_ = json.Unmarshal(doc, &shape)
	for _, label := range sortedKeys(shape.Executors) {
		if eerr := protojson.Unmarshal(shape.Executors[label], &pipelinespec.PipelineDeploymentConfig_ExecutorSpec{}); eerr != nil {
			return fmt.Errorf("executor %q: %w", label, protoError(eerr))
		}
	}
	return protoError(err)
}

// fromProto converts the decoded protobuf messages into the compiler's
// model. The fields of the pipelinespec types that the model has no place
// for are refused here when set, each by name.
func fromProto(pb *pipelinespec.PipelineSpec, deploy *pipelinespec.PipelineDeploymentConfig) (*PipelineSpec, error) {
	spec := &PipelineSpec{
		PipelineInfo: PipelineInfo{
			Name:        pb.GetPipelineInfo().GetName(),
			DisplayName: pb.GetPipelineInfo().GetDisplayName(),
			Description: pb.GetPipelineInfo().GetDescription(),
		},
		SchemaVersion:       pb.GetSchemaVersion(),
		SDKVersion:          pb.GetSdkVersion(),
		DefaultPipelineRoot: pb.GetDefaultPipelineRoot(),
	}
	var err error
	if pb.Root != nil {
		if spec.Root, err = fromComponent("root", pb.Root); err != nil {
			return nil, err
		}
	}
	if pb.Components != nil {
		spec.Components = make(map[string]*ComponentSpec, len(pb.Components))
		for _, name := range sortedKeys(pb.Components) {
			if spec.Components[name], err = fromComponent(name, pb.Components[name]); err != nil {
				return nil, err
			}
		}
	}
	if deploy.Executors != nil {
		spec.DeploymentSpec.Executors = make(map[string]*ExecutorSpec, len(deploy.Executors))
		for _, label := range sortedKeys(deploy.Executors) {
			spec.DeploymentSpec.Executors[label] = fromExecutor(deploy.Executors[label])
		}
	}
	return spec, nil
}

// refusedField refuses a field of the IR that the compiler does not support
// and has no place for in its model.
func refusedField(task, field, where string, args ...any) error {
	return unsupported(task, "IR field "+field, where, args...)
}

func fromComponent(name string, c *pipelinespec.ComponentSpec) (*ComponentSpec, error) {
	if c == nil {
		return nil, nil
	}
	out := &ComponentSpec{ExecutorLabel: c.GetExecutorLabel()}
	var err error
	if out.InputDefinitions, err = fromInputs(name, c.InputDefinitions); err != nil {
		return nil, err
	}
	if out.OutputDefinitions, err = fromOutputs(name, c.OutputDefinitions); err != nil {
		return nil, err
	}
	if d := c.GetDag(); d != nil {
		if out.DAG, err = fromDAG(d); err != nil {
			return nil, err
		}
	}
	if len(c.SinglePlatformSpecs) > 0 {
		list := make([]json.RawMessage, 0, len(c.SinglePlatformSpecs))
		for _, s := range c.SinglePlatformSpecs {
			list = append(list, protoJSON(s))
		}
		out.SinglePlatformSpecs, _ = json.Marshal(list)
	}
	return out, nil
}

func fromInputs(comp string, in *pipelinespec.ComponentInputsSpec) (*IODefinitions, error) {
	if in == nil {
		return nil, nil
	}
	out := &IODefinitions{}
	if in.Parameters != nil {
		out.Parameters = make(map[string]*ParameterSpec, len(in.Parameters))
		for _, key := range sortedKeys(in.Parameters) {
			p := in.Parameters[key]
			if p.GetType() != 0 {
				return nil, refusedField("", "inputDefinitions.parameters.type", "deprecated primitive type in component %s, input parameter %s; parameterType replaces it", comp, key)
			}
			out.Parameters[key] = &ParameterSpec{
				ParameterType: enumName(p.GetParameterType()),
				DefaultValue:  valueJSON(p.GetDefaultValue()),
				IsOptional:    p.GetIsOptional(),
				Description:   p.GetDescription(),
			}
		}
	}
	if in.Artifacts != nil {
		out.Artifacts = make(map[string]*ArtifactSpec, len(in.Artifacts))
		for _, key := range sortedKeys(in.Artifacts) {
			a := in.Artifacts[key]
			t, err := fromArtifactType(a.GetArtifactType(), "component %s, input artifact %s", comp, key)
			if err != nil {
				return nil, err
			}
			out.Artifacts[key] = &ArtifactSpec{
				ArtifactType: t, IsArtifactList: a.GetIsArtifactList(),
				IsOptional: a.GetIsOptional(), Description: a.GetDescription(),
			}
		}
	}
	return out, nil
}

func fromOutputs(comp string, o *pipelinespec.ComponentOutputsSpec) (*IODefinitions, error) {
	if o == nil {
		return nil, nil
	}
	out := &IODefinitions{}
	if o.Parameters != nil {
		out.Parameters = make(map[string]*ParameterSpec, len(o.Parameters))
		for _, key := range sortedKeys(o.Parameters) {
			p := o.Parameters[key]
			if p.GetType() != 0 {
				return nil, refusedField("", "outputDefinitions.parameters.type", "deprecated primitive type in component %s, output parameter %s; parameterType replaces it", comp, key)
			}
			out.Parameters[key] = &ParameterSpec{ParameterType: enumName(p.GetParameterType()), Description: p.GetDescription()}
		}
	}
	if o.Artifacts != nil {
		out.Artifacts = make(map[string]*ArtifactSpec, len(o.Artifacts))
		for _, key := range sortedKeys(o.Artifacts) {
			a := o.Artifacts[key]
			switch {
			case len(a.GetProperties()) > 0:
				return nil, refusedField("", "outputDefinitions.artifacts.properties", "component %s, output artifact %s", comp, key)
			case len(a.GetCustomProperties()) > 0:
				return nil, refusedField("", "outputDefinitions.artifacts.customProperties", "component %s, output artifact %s", comp, key)
			case a.GetMetadata() != nil:
				return nil, refusedField("", "outputDefinitions.artifacts.metadata", "component %s, output artifact %s", comp, key)
			}
			t, err := fromArtifactType(a.GetArtifactType(), "component %s, output artifact %s", comp, key)
			if err != nil {
				return nil, err
			}
			out.Artifacts[key] = &ArtifactSpec{ArtifactType: t, IsArtifactList: a.GetIsArtifactList(), Description: a.GetDescription()}
		}
	}
	return out, nil
}

func fromArtifactType(t *pipelinespec.ArtifactTypeSchema, where string, args ...any) (ArtifactType, error) {
	if _, ok := t.GetKind().(*pipelinespec.ArtifactTypeSchema_SchemaUri); ok {
		return ArtifactType{}, refusedField("", "artifactType.schemaUri", where, args...)
	}
	return ArtifactType{SchemaTitle: t.GetSchemaTitle(), SchemaVersion: t.GetSchemaVersion(), InstanceSchema: t.GetInstanceSchema()}, nil
}

func fromDAG(d *pipelinespec.DagSpec) (*DAGSpec, error) {
	out := &DAGSpec{Tasks: make(map[string]*TaskSpec, len(d.Tasks))}
	for _, name := range sortedKeys(d.Tasks) {
		t, err := fromTask(name, d.Tasks[name])
		if err != nil {
			return nil, err
		}
		out.Tasks[name] = t
	}
	if o := d.Outputs; o != nil {
		out.Outputs = &DAGOutputs{}
		if o.Parameters != nil {
			out.Outputs.Parameters = make(map[string]*DAGOutputParameter, len(o.Parameters))
			for _, key := range sortedKeys(o.Parameters) {
				p := o.Parameters[key]
				op := &DAGOutputParameter{ValueFromOneof: protoJSON(p.GetValueFromOneof())}
				if s := p.GetValueFromParameter(); s != nil {
					op.ValueFromParameter = &ParameterSelector{ProducerSubtask: s.GetProducerSubtask(), OutputParameterKey: s.GetOutputParameterKey()}
				}
				out.Outputs.Parameters[key] = op
			}
		}
		if o.Artifacts != nil {
			out.Outputs.Artifacts = make(map[string]json.RawMessage, len(o.Artifacts))
			for _, key := range sortedKeys(o.Artifacts) {
				out.Outputs.Artifacts[key] = protoJSONOrEmpty(o.Artifacts[key])
			}
		}
	}
	return out, nil
}

func fromTask(name string, t *pipelinespec.PipelineTaskSpec) (*TaskSpec, error) {
	out := &TaskSpec{
		TaskInfo:       TaskInfo{Name: t.GetTaskInfo().GetName()},
		ComponentRef:   ComponentRef{Name: t.GetComponentRef().GetName()},
		DependentTasks: t.GetDependentTasks(),
		IteratorPolicy: protoJSON(t.GetIteratorPolicy()),
		ParameterIter:  protoJSON(t.GetParameterIterator()),
		ArtifactIter:   protoJSON(t.GetArtifactIterator()),
	}
	if c := t.GetCachingOptions(); c != nil {
		out.CachingOptions = &CachingOptions{EnableCache: c.GetEnableCache()}
	}
	if r := t.GetRetryPolicy(); r != nil {
		out.RetryPolicy = &RetryPolicy{
			MaxRetryCount:      int(r.GetMaxRetryCount()),
			BackoffDuration:    durationText(r.GetBackoffDuration()),
			BackoffFactor:      r.GetBackoffFactor(),
			BackoffMaxDuration: durationText(r.GetBackoffMaxDuration()),
		}
	}
	if p := t.GetTriggerPolicy(); p != nil {
		out.TriggerPolicy = &TriggerPolicy{Condition: p.GetCondition(), Strategy: enumName(p.GetStrategy())}
	}
	in := t.GetInputs()
	if in == nil {
		return out, nil
	}
	out.Inputs = &TaskInputs{}
	if in.Parameters != nil {
		out.Inputs.Parameters = make(map[string]*InputParameter, len(in.Parameters))
		for _, key := range sortedKeys(in.Parameters) {
			p, err := fromInputParameter(name, key, in.Parameters[key])
			if err != nil {
				return nil, err
			}
			out.Inputs.Parameters[key] = p
		}
	}
	if in.Artifacts != nil {
		out.Inputs.Artifacts = make(map[string]*InputArtifact, len(in.Artifacts))
		for _, key := range sortedKeys(in.Artifacts) {
			a := in.Artifacts[key]
			ia := &InputArtifact{ComponentInputArtifact: a.GetComponentInputArtifact()}
			if src := a.GetTaskOutputArtifact(); src != nil {
				ia.TaskOutputArtifact = &TaskOutputArtifact{ProducerTask: src.GetProducerTask(), OutputArtifactKey: src.GetOutputArtifactKey()}
			}
			out.Inputs.Artifacts[key] = ia
		}
	}
	return out, nil
}

func fromInputParameter(task, key string, p *pipelinespec.TaskInputsSpec_InputParameterSpec) (*InputParameter, error) {
	out := &InputParameter{ParameterExpression: p.GetParameterExpressionSelector()}
	switch k := p.GetKind().(type) {
	case *pipelinespec.TaskInputsSpec_InputParameterSpec_ComponentInputParameter:
		out.ComponentInputParameter = k.ComponentInputParameter
	case *pipelinespec.TaskInputsSpec_InputParameterSpec_TaskOutputParameter:
		if src := k.TaskOutputParameter; src != nil {
			out.TaskOutputParameter = &TaskOutputParameter{ProducerTask: src.GetProducerTask(), OutputParameterKey: src.GetOutputParameterKey()}
		}
	case *pipelinespec.TaskInputsSpec_InputParameterSpec_TaskFinalStatus_:
		out.TaskFinalStatus = protoJSONOrEmpty(k.TaskFinalStatus)
	case *pipelinespec.TaskInputsSpec_InputParameterSpec_RuntimeValue:
		out.RuntimeValue = &RuntimeValue{}
		switch v := k.RuntimeValue.GetValue().(type) {
		case *pipelinespec.ValueOrRuntimeParameter_Constant:
			out.RuntimeValue.Constant = valueJSON(v.Constant)
		case *pipelinespec.ValueOrRuntimeParameter_ConstantValue:
			return nil, refusedField(task, "runtimeValue.constantValue", "deprecated in input parameter %q; constant replaces it", key)
		case *pipelinespec.ValueOrRuntimeParameter_RuntimeParameter:
			return nil, refusedField(task, "runtimeValue.runtimeParameter", "input parameter %q", key)
		}
	}
	return out, nil
}

func fromExecutor(e *pipelinespec.PipelineDeploymentConfig_ExecutorSpec) *ExecutorSpec {
	out := &ExecutorSpec{
		Importer:  protoJSON(e.GetImporter()),
		Resolver:  protoJSON(e.GetResolver()),
		CustomJob: protoJSON(e.GetCustomJob()),
	}
	c := e.GetContainer()
	if c == nil {
		return out
	}
	out.Container = &ContainerSpec{
		Image: c.GetImage(), Command: c.GetCommand(), Args: c.GetArgs(),
		Lifecycle: protoJSON(c.GetLifecycle()),
	}
	for _, env := range c.GetEnv() {
		out.Container.Env = append(out.Container.Env, EnvVar{Name: env.GetName(), Value: env.GetValue()})
	}
	if r := c.GetResources(); r != nil {
		out.Container.Resources = &Resources{
			ResourceCPULimit:      r.GetResourceCpuLimit(),
			ResourceCPURequest:    r.GetResourceCpuRequest(),
			ResourceMemoryLimit:   r.GetResourceMemoryLimit(),
			ResourceMemoryRequest: r.GetResourceMemoryRequest(),
			CPULimit:              r.GetCpuLimit(),
			CPURequest:            r.GetCpuRequest(),
			MemoryLimit:           r.GetMemoryLimit(),
			MemoryRequest:         r.GetMemoryRequest(),
			Accelerator:           protoJSON(r.GetAccelerator()),
		}
	}
	return out
}

// protoJSON is the protobuf JSON of m, compacted; nil when m is unset.
func protoJSON(m proto.Message) json.RawMessage {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil
	}
	return protoJSONOrEmpty(m)
}

// protoJSONOrEmpty is the protobuf JSON of m, compacted, "{}" for an unset m.
func protoJSONOrEmpty(m proto.Message) json.RawMessage {
	b, err := protojson.Marshal(m)
	var out bytes.Buffer
	if err != nil || json.Compact(&out, b) != nil {
		// m was decoded by protojson, so it encodes; keep it marked as set.
		return json.RawMessage("{}")
	}
	return out.Bytes()
}

// valueJSON is a google.protobuf.Value as JSON, nil when unset.
func valueJSON(v *structpb.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v.AsInterface())
	if err != nil {
		return nil
	}
	return b
}

// durationText is a google.protobuf.Duration in its JSON form ("30s"), empty
// when unset.
func durationText(d *durationpb.Duration) string {
	if d == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(protoJSONOrEmpty(d), &s); err != nil {
		return d.AsDuration().String()
	}
	return s
}

// enumName is the name of an enum value, empty for the unspecified value 0,
// and the number for a value the enum does not declare.
func enumName(e protoreflect.Enum) string {
	n := e.Number()
	if n == 0 {
		return ""
	}
	if v := e.Descriptor().Values().ByNumber(n); v != nil {
		return string(v.Name())
	}
	return fmt.Sprint(int32(n))
}
