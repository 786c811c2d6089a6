package kfpir

import (
	"encoding/json"
	"sort"
)

// PipelineSpec is the compiler's model of a KFP v2 pipeline: the subset of
// the IR (api/v2alpha1 pipeline_spec.proto) that Compile reads. Parse fills
// it from KFP's own protobuf types (package pipelinespec of
// github.com/kubeflow/pipelines/api); see parse.go for the conversion. Parts
// of the IR that Compile refuses are kept as protobuf JSON (json.RawMessage)
// so the refusal can name them; every other field of the protobuf types that
// the model does not hold is refused by Parse when set, so nothing in a
// document is silently ignored.
type PipelineSpec struct {
	PipelineInfo        PipelineInfo
	Root                *ComponentSpec
	Components          map[string]*ComponentSpec
	DeploymentSpec      DeploymentSpec
	SchemaVersion       string
	SDKVersion          string
	DefaultPipelineRoot string

	// PlatformSpec is the second YAML document a compiled file may hold (a
	// pipelinespec.PlatformSpec: kfp-kubernetes secrets, volumes, node
	// selectors, ...), as JSON. It is not part of the PipelineSpec message;
	// Parse keeps it so Compile can refuse it.
	PlatformSpec json.RawMessage
	// RuntimeConfig is the runtimeConfig of the PipelineJob wrapper form, kept
	// so Compile can refuse a non-empty one.
	RuntimeConfig json.RawMessage
}

// PipelineInfo names the pipeline.
type PipelineInfo struct {
	Name        string
	DisplayName string
	Description string
}

// ComponentSpec is a component: either a container executor (ExecutorLabel)
// or a DAG (only the root may be one).
type ComponentSpec struct {
	InputDefinitions  *IODefinitions
	OutputDefinitions *IODefinitions
	ExecutorLabel     string
	DAG               *DAGSpec
	// SinglePlatformSpecs and TaskConfigPassthroughs are component platform
	// configuration, which Compile refuses. (The pinned pipelinespec version
	// has no taskConfigPassthroughs, so Parse refuses that field as unknown.)
	SinglePlatformSpecs    json.RawMessage
	TaskConfigPassthroughs json.RawMessage
}

// IODefinitions are a component's inputs or outputs.
type IODefinitions struct {
	Parameters map[string]*ParameterSpec
	Artifacts  map[string]*ArtifactSpec
}

// ParameterSpec declares one parameter. ParameterType is the name of the
// pipelinespec.ParameterType_ParameterTypeEnum value, empty when unspecified.
type ParameterSpec struct {
	ParameterType string
	DefaultValue  json.RawMessage
	IsOptional    bool
	Description   string
}

// ArtifactSpec declares one artifact.
type ArtifactSpec struct {
	ArtifactType   ArtifactType
	IsArtifactList bool
	IsOptional     bool
	Description    string
}

// ArtifactType is the artifact's schema; informational here.
type ArtifactType struct {
	SchemaTitle    string
	SchemaVersion  string
	InstanceSchema string
}

// DAGSpec is a DAG of tasks and its outputs.
type DAGSpec struct {
	Tasks   map[string]*TaskSpec
	Outputs *DAGOutputs
}

// DAGOutputs are the outputs of a DAG (for the root: the pipeline's outputs).
type DAGOutputs struct {
	Parameters map[string]*DAGOutputParameter
	Artifacts  map[string]json.RawMessage
}

// DAGOutputParameter selects the task output a DAG output comes from.
type DAGOutputParameter struct {
	ValueFromParameter *ParameterSelector
	ValueFromOneof     json.RawMessage
}

// ParameterSelector names an output parameter of a task of the DAG.
type ParameterSelector struct {
	ProducerSubtask    string
	OutputParameterKey string
}

// TaskSpec is one task of a DAG.
type TaskSpec struct {
	TaskInfo        TaskInfo
	ComponentRef    ComponentRef
	DependentTasks  []string
	Inputs          *TaskInputs
	CachingOptions  *CachingOptions
	RetryPolicy     *RetryPolicy
	TriggerPolicy   *TriggerPolicy
	IteratorPolicy  json.RawMessage
	ParameterIter   json.RawMessage
	ArtifactIter    json.RawMessage
	PlatformConfig  json.RawMessage
	TaskConfigPass  json.RawMessage
	ComponentConfig json.RawMessage

	// Set by flatten: the conditions of the groups around the task (and
	// its own), outermost first, and whether it runs in Tekton's finally
	// (an exit task, or one that ignores upstream failures).
	conds []*flatCondition
	final bool
	// loop is the run-time loop the task fans out over, if any.
	loop *flatLoop
	// platformNames are the parameters naming the Secrets, ConfigMaps
	// and PVCs its executor's kfp-kubernetes config uses, by setting and
	// index (platformnames.go).
	platformNames map[string]*InputParameter
	// exitPipeline is the key of the exit pipeline whose tasks depend on
	// each other that the task is in: it runs as one of that pipeline's
	// steps (exitpipeline.go).
	exitPipeline string
}

// TaskInfo is the task's display information.
type TaskInfo struct {
	Name     string
	TaskName string
}

// ComponentRef names a component of PipelineSpec.Components.
type ComponentRef struct {
	Name string
}

// TaskInputs bind a task's component inputs.
type TaskInputs struct {
	Parameters map[string]*InputParameter
	Artifacts  map[string]*InputArtifact
}

// InputParameter is where a task's input parameter comes from; exactly one
// field is set.
type InputParameter struct {
	ComponentInputParameter string
	RuntimeValue            *RuntimeValue
	TaskOutputParameter     *TaskOutputParameter
	TaskFinalStatus         json.RawMessage
	ParameterExpression     string

	// Set by flatten: the current item of a run-time loop (with the
	// selector of one of its fields, if any); the outputs of an unrolled
	// loop's iterations; the output of a run-time loop's fanned-out task.
	loopItem      *flatLoop
	oneOf         *oneOfOutput // a dsl.OneOf output: its selector task (oneof.go)
	selector      string
	collected     []*InputParameter
	collectedFrom *TaskOutputParameter
}

// RuntimeValue is a constant (a google.protobuf.Value as JSON).
type RuntimeValue struct {
	Constant json.RawMessage
}

// TaskOutputParameter refers to an output parameter of another task.
type TaskOutputParameter struct {
	ProducerTask       string
	OutputParameterKey string
}

// InputArtifact is where a task's input artifact comes from.
type InputArtifact struct {
	TaskOutputArtifact     *TaskOutputArtifact
	ComponentInputArtifact string
	RuntimeArtifact        json.RawMessage

	// Set by flatten: the output artifacts of an unrolled loop's
	// iterations, in order (one flat list over nested loops, as KFP's
	// artifact lists are); the output artifact of a run-time loop's
	// fanned-out task.
	collected     []*TaskOutputArtifact
	collectedFrom *TaskOutputArtifact
	oneOf         *oneOfOutput // a dsl.OneOf output: its selector task (oneof.go)
	// loopItem: the current item of a run-time loop over artifacts.
	loopItem *flatLoop
}

// TaskOutputArtifact refers to an output artifact of another task.
type TaskOutputArtifact struct {
	ProducerTask      string
	OutputArtifactKey string
}

// CachingOptions of a task.
type CachingOptions struct {
	EnableCache bool
	CacheKey    string
}

// RetryPolicy of a task. The durations are in protobuf JSON form ("30s"),
// empty when unset.
type RetryPolicy struct {
	MaxRetryCount      int
	BackoffDuration    string
	BackoffFactor      float64
	BackoffMaxDuration string
}

// TriggerPolicy of a task. Strategy is the name of the
// pipelinespec.PipelineTaskSpec_TriggerPolicy_TriggerStrategy value, empty
// when unspecified.
type TriggerPolicy struct {
	Condition string
	Strategy  string
}

// DeploymentSpec holds the executors.
type DeploymentSpec struct {
	Executors map[string]*ExecutorSpec
}

// ExecutorSpec is one executor; only Container is supported.
type ExecutorSpec struct {
	Container *ContainerSpec
	Importer  json.RawMessage
	Resolver  json.RawMessage
	CustomJob json.RawMessage
}

// ContainerSpec is a container executor.
type ContainerSpec struct {
	Image     string
	Command   []string
	Args      []string
	Env       []EnvVar
	Resources *Resources
	Lifecycle json.RawMessage
}

// EnvVar is a literal environment variable.
type EnvVar struct {
	Name  string
	Value string
}

// Resources of a container executor. The Resource* strings are Kubernetes
// quantities (SDK 2.x); the numbers are the older form (cores, and GB of
// 10^9 bytes).
type Resources struct {
	ResourceCPULimit      string
	ResourceCPURequest    string
	ResourceMemoryLimit   string
	ResourceMemoryRequest string
	CPULimit              float64
	CPURequest            float64
	MemoryLimit           float64
	MemoryRequest         float64
	Accelerator           json.RawMessage
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
