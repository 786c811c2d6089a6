package kfpir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// PipelineSpec is the subset of the KFP v2 IR (api/v2alpha1 pipeline_spec.proto,
// protobuf JSON field names) that this package reads. Fields of the IR that
// Compile refuses are decoded too (as raw JSON) so that the refusal can name
// them; any field not listed here at all makes Parse fail, so nothing in a
// document is silently ignored.
type PipelineSpec struct {
	PipelineInfo        PipelineInfo              `json:"pipelineInfo"`
	Root                *ComponentSpec            `json:"root"`
	Components          map[string]*ComponentSpec `json:"components,omitempty"`
	DeploymentSpec      DeploymentSpec            `json:"deploymentSpec"`
	SchemaVersion       string                    `json:"schemaVersion"`
	SDKVersion          string                    `json:"sdkVersion,omitempty"`
	DefaultPipelineRoot string                    `json:"defaultPipelineRoot,omitempty"`

	// PlatformSpec is the second YAML document a compiled file may hold
	// (kfp-kubernetes: secrets, volumes, node selectors, ...). It is not part of
	// the PipelineSpec message; Parse keeps it so Compile can refuse it.
	PlatformSpec json.RawMessage `json:"-"`
	// RuntimeConfig is the runtimeConfig of the PipelineJob wrapper form, kept
	// so Compile can refuse a non-empty one.
	RuntimeConfig json.RawMessage `json:"-"`
}

// PipelineInfo names the pipeline.
type PipelineInfo struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

// ComponentSpec is a component: either a container executor (ExecutorLabel)
// or a DAG (only the root may be one).
type ComponentSpec struct {
	InputDefinitions  *IODefinitions `json:"inputDefinitions,omitempty"`
	OutputDefinitions *IODefinitions `json:"outputDefinitions,omitempty"`
	ExecutorLabel     string         `json:"executorLabel,omitempty"`
	DAG               *DAGSpec       `json:"dag,omitempty"`
	// SinglePlatformSpecs and TaskConfigPassthroughs appear in newer SDKs.
	SinglePlatformSpecs    json.RawMessage `json:"singlePlatformSpecs,omitempty"`
	TaskConfigPassthroughs json.RawMessage `json:"taskConfigPassthroughs,omitempty"`
}

// IODefinitions are a component's inputs or outputs.
type IODefinitions struct {
	Parameters map[string]*ParameterSpec `json:"parameters,omitempty"`
	Artifacts  map[string]*ArtifactSpec  `json:"artifacts,omitempty"`
}

// ParameterSpec declares one parameter.
type ParameterSpec struct {
	ParameterType string          `json:"parameterType"`
	DefaultValue  json.RawMessage `json:"defaultValue,omitempty"`
	IsOptional    bool            `json:"isOptional,omitempty"`
	Description   string          `json:"description,omitempty"`
}

// ArtifactSpec declares one artifact.
type ArtifactSpec struct {
	ArtifactType   ArtifactType `json:"artifactType"`
	IsArtifactList bool         `json:"isArtifactList,omitempty"`
	IsOptional     bool         `json:"isOptional,omitempty"`
	Description    string       `json:"description,omitempty"`
}

// ArtifactType is the artifact's schema; informational here.
type ArtifactType struct {
	SchemaTitle    string `json:"schemaTitle,omitempty"`
	SchemaVersion  string `json:"schemaVersion,omitempty"`
	InstanceSchema string `json:"instanceSchema,omitempty"`
}

// DAGSpec is a DAG of tasks and its outputs.
type DAGSpec struct {
	Tasks   map[string]*TaskSpec `json:"tasks"`
	Outputs *DAGOutputs          `json:"outputs,omitempty"`
}

// UnmarshalJSON decodes the tasks one by one, strictly, so an unknown field
// is reported with the task that holds it.
func (d *DAGSpec) UnmarshalJSON(data []byte) error {
	var raw struct {
		Tasks   map[string]json.RawMessage `json:"tasks"`
		Outputs *DAGOutputs                `json:"outputs,omitempty"`
	}
	if err := strictUnmarshal(data, &raw); err != nil {
		return err
	}
	d.Outputs = raw.Outputs
	d.Tasks = make(map[string]*TaskSpec, len(raw.Tasks))
	for _, name := range sortedKeys(raw.Tasks) {
		var t TaskSpec
		if err := strictUnmarshal(raw.Tasks[name], &t); err != nil {
			return fmt.Errorf("task %q: %w", name, err)
		}
		d.Tasks[name] = &t
	}
	return nil
}

// DAGOutputs are the outputs of a DAG (for the root: the pipeline's outputs).
type DAGOutputs struct {
	Parameters map[string]*DAGOutputParameter `json:"parameters,omitempty"`
	Artifacts  map[string]json.RawMessage     `json:"artifacts,omitempty"`
}

// DAGOutputParameter selects the task output a DAG output comes from.
type DAGOutputParameter struct {
	ValueFromParameter *struct {
		ProducerSubtask    string `json:"producerSubtask"`
		OutputParameterKey string `json:"outputParameterKey"`
	} `json:"valueFromParameter,omitempty"`
	ValueFromOneof json.RawMessage `json:"valueFromOneof,omitempty"`
}

// TaskSpec is one task of a DAG.
type TaskSpec struct {
	TaskInfo        TaskInfo        `json:"taskInfo"`
	ComponentRef    ComponentRef    `json:"componentRef"`
	DependentTasks  []string        `json:"dependentTasks,omitempty"`
	Inputs          *TaskInputs     `json:"inputs,omitempty"`
	CachingOptions  *CachingOptions `json:"cachingOptions,omitempty"`
	RetryPolicy     *RetryPolicy    `json:"retryPolicy,omitempty"`
	TriggerPolicy   *TriggerPolicy  `json:"triggerPolicy,omitempty"`
	IteratorPolicy  json.RawMessage `json:"iteratorPolicy,omitempty"`
	ParameterIter   json.RawMessage `json:"parameterIterator,omitempty"`
	ArtifactIter    json.RawMessage `json:"artifactIterator,omitempty"`
	PlatformConfig  json.RawMessage `json:"platformConfig,omitempty"`
	TaskConfigPass  json.RawMessage `json:"taskConfigPassthroughs,omitempty"`
	ComponentConfig json.RawMessage `json:"componentConfig,omitempty"`
}

// TaskInfo is the task's display information.
type TaskInfo struct {
	Name     string `json:"name"`
	TaskName string `json:"taskName,omitempty"`
}

// ComponentRef names a component of PipelineSpec.Components.
type ComponentRef struct {
	Name string `json:"name"`
}

// TaskInputs bind a task's component inputs.
type TaskInputs struct {
	Parameters map[string]*InputParameter `json:"parameters,omitempty"`
	Artifacts  map[string]*InputArtifact  `json:"artifacts,omitempty"`
}

// InputParameter is where a task's input parameter comes from; exactly one
// field is set.
type InputParameter struct {
	ComponentInputParameter string               `json:"componentInputParameter,omitempty"`
	RuntimeValue            *RuntimeValue        `json:"runtimeValue,omitempty"`
	TaskOutputParameter     *TaskOutputParameter `json:"taskOutputParameter,omitempty"`
	TaskFinalStatus         json.RawMessage      `json:"taskFinalStatus,omitempty"`
	ParameterExpression     string               `json:"parameterExpressionSelector,omitempty"`
}

// RuntimeValue is a constant.
type RuntimeValue struct {
	Constant json.RawMessage `json:"constant,omitempty"`
}

// TaskOutputParameter refers to an output parameter of another task.
type TaskOutputParameter struct {
	ProducerTask       string `json:"producerTask"`
	OutputParameterKey string `json:"outputParameterKey"`
}

// InputArtifact is where a task's input artifact comes from.
type InputArtifact struct {
	TaskOutputArtifact     *TaskOutputArtifact `json:"taskOutputArtifact,omitempty"`
	ComponentInputArtifact string              `json:"componentInputArtifact,omitempty"`
	RuntimeArtifact        json.RawMessage     `json:"runtimeArtifact,omitempty"`
}

// TaskOutputArtifact refers to an output artifact of another task.
type TaskOutputArtifact struct {
	ProducerTask      string `json:"producerTask"`
	OutputArtifactKey string `json:"outputArtifactKey"`
}

// CachingOptions of a task.
type CachingOptions struct {
	EnableCache bool   `json:"enableCache,omitempty"`
	CacheKey    string `json:"cacheKey,omitempty"`
}

// RetryPolicy of a task.
type RetryPolicy struct {
	MaxRetryCount      int     `json:"maxRetryCount,omitempty"`
	BackoffDuration    string  `json:"backoffDuration,omitempty"`
	BackoffFactor      float64 `json:"backoffFactor,omitempty"`
	BackoffMaxDuration string  `json:"backoffMaxDuration,omitempty"`
}

// TriggerPolicy of a task.
type TriggerPolicy struct {
	Condition string `json:"condition,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
}

// DeploymentSpec holds the executors.
type DeploymentSpec struct {
	Executors map[string]*ExecutorSpec `json:"executors"`
}

// ExecutorSpec is one executor; only Container is supported.
type ExecutorSpec struct {
	Container *ContainerSpec  `json:"container,omitempty"`
	Importer  json.RawMessage `json:"importer,omitempty"`
	Resolver  json.RawMessage `json:"resolver,omitempty"`
	CustomJob json.RawMessage `json:"customJob,omitempty"`
}

// ContainerSpec is a container executor.
type ContainerSpec struct {
	Image     string          `json:"image"`
	Command   []string        `json:"command,omitempty"`
	Args      []string        `json:"args,omitempty"`
	Env       []EnvVar        `json:"env,omitempty"`
	Resources *Resources      `json:"resources,omitempty"`
	Lifecycle json.RawMessage `json:"lifecycle,omitempty"`
}

// EnvVar is a literal environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Resources of a container executor. The resource* strings are Kubernetes
// quantities (SDK 2.x); the numbers are the older form (cores, and GB of
// 10^9 bytes).
type Resources struct {
	ResourceCPULimit      string          `json:"resourceCpuLimit,omitempty"`
	ResourceCPURequest    string          `json:"resourceCpuRequest,omitempty"`
	ResourceMemoryLimit   string          `json:"resourceMemoryLimit,omitempty"`
	ResourceMemoryRequest string          `json:"resourceMemoryRequest,omitempty"`
	CPULimit              float64         `json:"cpuLimit,omitempty"`
	CPURequest            float64         `json:"cpuRequest,omitempty"`
	MemoryLimit           float64         `json:"memoryLimit,omitempty"`
	MemoryRequest         float64         `json:"memoryRequest,omitempty"`
	Accelerator           json.RawMessage `json:"accelerator,omitempty"`
}

// docSeparator splits a multi-document YAML stream.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Parse reads a compiled KFP v2 pipeline: the PipelineSpec as YAML or JSON,
// optionally followed by a second YAML document holding the platform spec,
// or a PipelineJob ({"pipelineSpec": ..., "runtimeConfig": ...}). Unknown
// fields are errors. Only schemaVersion 2.x is accepted.
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
	main, err := yaml.YAMLToJSON(docs[0])
	if err != nil {
		return nil, fmt.Errorf("kfp IR: not YAML or JSON: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(main, &top); err != nil {
		return nil, fmt.Errorf("kfp IR: the document is not an object: %w", err)
	}
	var runtimeConfig json.RawMessage
	if inner, ok := top["pipelineSpec"]; ok {
		if _, hasRoot := top["root"]; !hasRoot {
			runtimeConfig = top["runtimeConfig"]
			for k := range top {
				switch k {
				case "pipelineSpec", "runtimeConfig", "displayName", "name", "labels":
				default:
					return nil, fmt.Errorf("kfp IR: PipelineJob field %q is not supported", k)
				}
			}
			main = inner
		}
	}
	var version struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	_ = json.Unmarshal(main, &version)
	if err := checkSchemaVersion(version.SchemaVersion); err != nil {
		return nil, err
	}
	spec := &PipelineSpec{}
	if err := strictUnmarshal(main, spec); err != nil {
		return nil, fmt.Errorf("kfp IR: unsupported or malformed pipeline spec: %w", err)
	}
	spec.RuntimeConfig = runtimeConfig
	if len(docs) == 2 {
		platform, err := yaml.YAMLToJSON(docs[1])
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

func strictUnmarshal(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
