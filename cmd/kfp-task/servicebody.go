package main

// The request bodies of the provider-service API: the definitions of a
// pipeline (with the framework's patches and the compiled pipeline), an
// experiment, a run and a run schedule, built from the resource.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	jsonpatch "github.com/evanphx/json-patch/v5"
	yamlv3 "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// namedValue is the API's NamedValue: both fields, always.
type namedValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// pipelineDefinition is the API's PipelineDefinition.
type pipelineDefinition struct {
	Name      string       `json:"name"`
	Version   string       `json:"version"`
	Image     string       `json:"image"`
	Env       []namedValue `json:"env,omitempty"`
	Framework struct {
		Name       string                          `json:"name"`
		Parameters map[string]apiextensionsv1.JSON `json:"parameters"`
	} `json:"framework"`
}

// pipelineBody is {"pipelineDefinition": …, "compiledPipeline": …}: the
// definition with the framework's patches applied, and the compiled
// pipeline as a JSON object.
func pipelineBody(res contract.Resource, cfg contract.ProviderConfig, compiled []byte) ([]byte, error) {
	var spec pipelinesv1beta1.PipelineSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	var def pipelineDefinition
	def.Name = namespaced(res.Metadata.Namespace, res.Metadata.Name)
	def.Version = res.Version
	def.Image = spec.Image
	for _, e := range spec.Env {
		def.Env = append(def.Env, namedValue(e))
	}
	def.Framework.Name = spec.Framework.Name
	def.Framework.Parameters = spec.Framework.Parameters
	if def.Framework.Parameters == nil {
		// An object, so that a patch may add to /framework/parameters.
		def.Framework.Parameters = map[string]apiextensionsv1.JSON{}
	}
	defJSON, err := marshalJSON(def)
	if err != nil {
		return nil, err
	}
	if defJSON, err = applyPatches(defJSON, cfg, spec.Framework.Name); err != nil {
		return nil, err
	}
	object, err := compiledObject(compiled)
	if err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		PipelineDefinition json.RawMessage `json:"pipelineDefinition"`
		CompiledPipeline   json.RawMessage `json:"compiledPipeline"`
	}{defJSON, object})
}

// applyPatches applies, in order, the patches of the Provider's framework
// name to the pipeline definition def.
func applyPatches(def []byte, cfg contract.ProviderConfig, name string) ([]byte, error) {
	var patches []pipelinesv1beta1.Patch
	for _, f := range cfg.Spec.Frameworks {
		if f.Name == name {
			patches = f.Patches
		}
	}
	for i, p := range patches {
		where := fmt.Sprintf("provider %s/%s: framework %q patches[%d] (%s)", cfg.Namespace, cfg.Name, name, i, p.Type)
		var err error
		switch p.Type {
		case pipelinesv1beta1.PatchJSON:
			var patch jsonpatch.Patch
			if patch, err = jsonpatch.DecodePatch([]byte(p.Document())); err != nil {
				return nil, fmt.Errorf("%s: the payload is not an RFC 6902 JSON Patch (a JSON list of operations): %w", where, err)
			}
			def, err = patch.Apply(def)
		case pipelinesv1beta1.PatchMerge:
			if !isJSONObject([]byte(p.Document())) {
				return nil, fmt.Errorf("%s: the payload is not an RFC 7386 merge patch (a JSON object)", where)
			}
			def, err = jsonpatch.MergePatch(def, []byte(p.Document()))
		default:
			return nil, fmt.Errorf("%s: unknown patch type (want json or merge)", where)
		}
		if err != nil {
			return nil, fmt.Errorf("%s does not apply to the pipeline definition: %w", where, err)
		}
		if !isJSONObject(def) {
			return nil, fmt.Errorf("%s leaves a pipeline definition that is not a JSON object", where)
		}
	}
	return def, nil
}

func isJSONObject(data []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(data, &m) == nil && m != nil
}

// compiledObject is the compiled pipeline file (YAML or JSON) as a JSON
// object, the form kfp-operator's services read. A file of several YAML
// documents (e.g. a KFP platform spec after the pipeline spec) has no such
// form, and is refused rather than cut.
func compiledObject(compiled []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(compiled)) == 0 {
		return nil, errors.New("the compiled pipeline definition is empty")
	}
	if json.Valid(compiled) {
		if !isJSONObject(compiled) {
			return nil, errors.New("the compiled pipeline definition is JSON but not an object")
		}
		return compiled, nil
	}
	var docs []any
	dec := yamlv3.NewDecoder(bytes.NewReader(compiled))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the compiled pipeline definition is neither JSON nor YAML: %w", err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, errors.New("the compiled pipeline definition holds no YAML document")
	case len(docs) > 1:
		return nil, fmt.Errorf("the compiled pipeline definition holds %d YAML documents (e.g. a KFP platform spec after the pipeline spec); "+
			"the provider-service API takes compiledPipeline as one JSON object, so only a single-document definition can be sent", len(docs))
	}
	if _, ok := docs[0].(map[string]any); !ok {
		return nil, errors.New("the compiled pipeline definition is YAML but not a mapping with string keys")
	}
	object, err := marshalJSON(docs[0])
	if err != nil {
		return nil, fmt.Errorf("the compiled pipeline definition cannot be expressed as JSON: %w", err)
	}
	return object, nil
}

// experimentBody is the API's ExperimentDefinition.
func experimentBody(res contract.Resource) ([]byte, error) {
	var spec pipelinesv1beta1.ExperimentSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}{namespaced(res.Metadata.Namespace, res.Metadata.Name), res.Version, spec.Description})
}

// runDefinition is the API's RunDefinition, and with Schedule its
// RunScheduleDefinition.
type runDefinition struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	PipelineName         string            `json:"pipelineName"`
	PipelineVersion      string            `json:"pipelineVersion"`
	RunConfigurationName string            `json:"runConfigurationName"`
	ExperimentName       string            `json:"experimentName"`
	Schedule             *scheduleDef      `json:"schedule,omitempty"`
	Parameters           map[string]string `json:"parameters,omitempty"`
	Artifacts            []artifactDef     `json:"artifacts,omitempty"`
	// TriggerIndicator is sent as kfp-operator sends it: always for a
	// runschedule, and for a run (all empty for one made by hand).
	TriggerIndicator *contract.TriggerIndicator `json:"triggerIndicator,omitempty"`
}

type scheduleDef struct {
	CronExpression string       `json:"cronExpression"`
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	EndTime        *metav1.Time `json:"endTime,omitempty"`
}

type artifactDef struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// runBody is the definition of a Run or a RunSchedule (kind).
func runBody(kind string, res contract.Resource) ([]byte, error) {
	var spec pipelinesv1beta1.RunScheduleSpec // a Run's spec is its RunSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	if res.Pipeline == nil || res.Pipeline.Name == "" {
		return nil, fmt.Errorf("%s %s/%s: the operator did not resolve the pipeline it runs (resource.pipeline is absent)",
			kind, res.Metadata.Namespace, res.Metadata.Name)
	}
	def := runDefinition{
		Name:             namespaced(res.Metadata.Namespace, res.Metadata.Name),
		Version:          res.Version,
		PipelineName:     namespaced(res.Metadata.Namespace, res.Pipeline.Name),
		PipelineVersion:  res.Pipeline.Version,
		ExperimentName:   namespaced(res.Metadata.Namespace, spec.ExperimentName),
		TriggerIndicator: res.TriggerIndicator,
	}
	if def.TriggerIndicator == nil {
		// A resource JSON from before the field: its kind's indicator.
		def.TriggerIndicator = contract.TriggerOf(res.Kind, res.Metadata.Namespace, res.Metadata.Name, nil)
	}
	if o := res.Metadata.Owner; o != nil && o.Kind == "RunConfiguration" {
		def.RunConfigurationName = namespaced(res.Metadata.Namespace, o.Name)
	}
	if kind == kindRunSchedule {
		def.Schedule = &scheduleDef{CronExpression: spec.Schedule.CronExpression,
			StartTime: spec.Schedule.StartTime, EndTime: spec.Schedule.EndTime}
	}
	params, err := contract.RunParameters(res, spec.Parameters)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		def.Parameters = map[string]string{}
		for _, p := range params {
			def.Parameters[p.Name] = p.Value
		}
	}
	for _, a := range spec.Artifacts {
		def.Artifacts = append(def.Artifacts, artifactDef(a))
	}
	return marshalJSON(def)
}
