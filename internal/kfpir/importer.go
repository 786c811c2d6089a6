package kfpir

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Importers (dsl.importer). An importer task makes no pod: its artifact
// is the URI it names (a constant, or the value of one of its inputs),
// with the metadata it gives, and the tasks taking that artifact get the
// URI (and, through the launcher, the metadata). Artifacts live on the
// pipeline root's volume, so a constant URI must be a file:/// path under
// the root; a URI from a parameter is checked by the launcher when the
// consuming task runs. Metadata with placeholders is refused.

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
	metadata string // JSON, or empty
}

// importerOf returns the artifact of the importer task at key, or nil
// when the task is not an importer.
func (c *compiler) importerOf(key string) (*importer, error) {
	t := c.flat[key]
	if t == nil {
		return nil, nil
	}
	comp := c.spec.Components[t.ComponentRef.Name]
	if comp == nil || comp.ExecutorLabel == "" {
		return nil, nil
	}
	e := c.spec.DeploymentSpec.Executors[comp.ExecutorLabel]
	if e == nil || len(e.Importer) == 0 {
		return nil, nil
	}
	var spec importerSpec
	if err := json.Unmarshal(e.Importer, &spec); err != nil {
		return nil, fmt.Errorf("task %q: importer: %w", key, err)
	}
	imp := &importer{}
	if len(spec.Metadata) > 0 && !isEmptyJSON(spec.Metadata) {
		if strings.Contains(string(spec.Metadata), "{{$") {
			return nil, unsupported(key, "importer metadata from parameters", "executor %s", comp.ExecutorLabel)
		}
		imp.metadata = string(spec.Metadata)
	}
	switch {
	case len(spec.ArtifactURI.Constant) > 0:
		var uri string
		if err := json.Unmarshal(spec.ArtifactURI.Constant, &uri); err != nil {
			return nil, fmt.Errorf("task %q: importer artifactUri.constant is not a string", key)
		}
		p, ok := strings.CutPrefix(uri, "file://")
		if !ok || !strings.HasPrefix(p, "/") {
			return nil, unsupported(key, "importer of "+uri, "artifacts are file:/// paths on the pipeline root's volume (%s)", c.rootURI)
		}
		if p = path.Clean(p); p != c.rootPath && !strings.HasPrefix(p, c.rootPath+"/") {
			return nil, unsupported(key, "importer of "+uri, "the path is not under the pipeline root %s, the only volume a task mounts", c.rootPath)
		}
		if err := checkLiteral(key, uri); err != nil {
			return nil, err
		}
		imp.uri, imp.path = uri, p
	case spec.ArtifactURI.RuntimeParameter != "":
		in := t.Inputs.Parameters[spec.ArtifactURI.RuntimeParameter]
		if in == nil {
			return nil, fmt.Errorf("task %q: importer URI input %q is not bound", key, spec.ArtifactURI.RuntimeParameter)
		}
		v, _, err := c.inputValue(key, spec.ArtifactURI.RuntimeParameter, in, "STRING")
		if err != nil {
			return nil, err
		}
		imp.uri = v
	default:
		return nil, fmt.Errorf("task %q: importer without artifactUri", key)
	}
	return imp, nil
}
