package kfpir

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// Importers (dsl.importer). An importer task makes no pod: like KFP's, it
// only records an artifact, the URI it names (a constant, or the value of
// one of its inputs) with the metadata it gives, and the tasks taking that
// artifact get the URI and the metadata. Any URI is recorded: the store is
// touched only when a consumer's launcher fetches the artifact, which
// refuses by name a store it cannot read (launcher.CheckInputStore). A
// file:/// URI under the pipeline root is a path on the artifacts volume,
// known when compiling; any other URI, or metadata, makes the consumer run
// under the launcher. Metadata may hold placeholders of the importer's
// inputs: the consumer's launcher fills them with the inputs' values.

// importerSpec is an importer executor (pipeline_spec.proto's
// PipelineDeploymentConfig.ImporterSpec, protobuf JSON).
type importerSpec struct {
	ArtifactURI struct {
		Constant         json.RawMessage `json:"constant"`
		RuntimeParameter string          `json:"runtimeParameter"`
	} `json:"artifactUri"`
	Metadata json.RawMessage `json:"metadata"`
}

// importer is an importer task's artifact, as its consumers see it.
type importer struct {
	uri      string // text, or a Tekton reference to the value
	path     string // the local path, when known when compiling
	metadata string // JSON, or empty; may hold placeholders of metaParams
	// metaParams are the values (text or Tekton references) of the
	// importer's inputs its metadata's placeholders name.
	metaParams map[string]string
	// after are the tasks producing the URI's or metadata's values.
	after []string
}

// importerExecutor is the importer spec of the task at key, or nil when
// the task is not an importer.
func (c *compiler) importerExecutor(key string) json.RawMessage {
	t := c.flat[key]
	if t == nil {
		return nil
	}
	comp := c.spec.Components[t.ComponentRef.Name]
	if comp == nil || comp.ExecutorLabel == "" {
		return nil
	}
	e := c.spec.DeploymentSpec.Executors[comp.ExecutorLabel]
	if e == nil || len(e.Importer) == 0 {
		return nil
	}
	return e.Importer
}

// importerOf returns the artifact of the importer task at key, or nil
// when the task is not an importer.
func (c *compiler) importerOf(key string) (*importer, error) {
	raw := c.importerExecutor(key)
	if raw == nil {
		return nil, nil
	}
	t := c.flat[key]
	if out := c.spec.Components[t.ComponentRef.Name].OutputDefinitions; out == nil || len(out.Artifacts) != 1 || len(out.Parameters) > 0 {
		return nil, fmt.Errorf("task %q: an importer has one output artifact and no output parameters", key)
	}
	var spec importerSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("task %q: importer: %w", key, err)
	}
	// Its consumers run after what it depends on (it makes no task).
	imp := &importer{metaParams: map[string]string{}, after: slices.Clone(t.DependentTasks)}
	if len(spec.Metadata) > 0 && !isEmptyJSON(spec.Metadata) {
		if err := c.importerMetadata(key, t, spec.Metadata, imp); err != nil {
			return nil, err
		}
	}
	switch {
	case len(spec.ArtifactURI.Constant) > 0:
		var uri string
		if err := json.Unmarshal(spec.ArtifactURI.Constant, &uri); err != nil || uri == "" {
			return nil, fmt.Errorf("task %q: importer artifactUri.constant is not a URI", key)
		}
		if err := checkLiteral(key, uri); err != nil {
			return nil, err
		}
		imp.uri, imp.path = uri, c.volumePath(uri)
	case spec.ArtifactURI.RuntimeParameter != "":
		v, producer, err := c.importerInput(key, t, spec.ArtifactURI.RuntimeParameter, "importer URI input")
		if err != nil {
			return nil, err
		}
		imp.uri = v
		imp.after = appendProducer(imp.after, producer)
	default:
		return nil, fmt.Errorf("task %q: importer without artifactUri", key)
	}
	return imp, nil
}

// volumePath is the path on the artifacts volume of a file:/// URI under
// the pipeline root, or "" for any other URI (the consumer's launcher
// checks it when the task runs).
func (c *compiler) volumePath(uri string) string {
	p, ok := strings.CutPrefix(uri, "file://")
	if !ok || !strings.HasPrefix(p, "/") {
		return ""
	}
	if p = path.Clean(p); p != c.rootPath && !strings.HasPrefix(p, c.rootPath+"/") {
		return ""
	}
	return p
}

// importerMetadata records the metadata and the values of the inputs its
// placeholders name; a placeholder of anything else is refused.
func (c *compiler) importerMetadata(key string, t *TaskSpec, raw json.RawMessage, imp *importer) error {
	imp.metadata = string(raw)
	names, err := launcher.MetadataInputs(raw)
	if err != nil {
		return unsupported(key, "importer metadata placeholder", "%v", err)
	}
	for _, param := range names {
		if strings.ContainsAny(param, ":=") {
			return unsupported(key, "importer metadata input name with ':' or '='", "input %q", param)
		}
		v, producer, err := c.importerInput(key, t, param, "importer metadata input")
		if err != nil {
			return err
		}
		imp.metaParams[param] = v
		imp.after = appendProducer(imp.after, producer)
	}
	return nil
}

// importerInput is the value of the importer's input name.
func (c *compiler) importerInput(key string, t *TaskSpec, name, what string) (string, string, error) {
	in := t.Inputs.Parameters[name]
	if in == nil {
		return "", "", fmt.Errorf("task %q: %s %q is not bound", key, what, name)
	}
	typ := "STRING"
	if comp := c.spec.Components[t.ComponentRef.Name]; comp.InputDefinitions != nil && comp.InputDefinitions.Parameters[name] != nil {
		typ = comp.InputDefinitions.Parameters[name].ParameterType
	}
	return c.inputValue(key, name, in, typ)
}

func appendProducer(after []string, producer string) []string {
	if producer == "" {
		return after
	}
	return append(after, producer)
}
