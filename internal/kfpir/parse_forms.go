package kfpir

import (
	"encoding/json"
	"fmt"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/encoding/protojson"
)

// The forms a compiled pipeline comes in besides a bare pipeline spec: a
// PipelineJob around it, and the fields the 2.0 beta SDKs wrote.

// unwrapJob returns the pipeline spec inside a PipelineJob, and the job's
// runtimeConfig; a bare pipeline spec is returned as it is.
func unwrapJob(main []byte, top map[string]json.RawMessage) ([]byte, map[string]json.RawMessage, json.RawMessage, error) {
	inner, ok := top["pipelineSpec"]
	if _, hasRoot := top["root"]; !ok || hasRoot {
		return main, top, nil, nil
	}
	for k := range top {
		switch k {
		case "pipelineSpec", "runtimeConfig", "displayName", "name", "labels":
		default:
			return nil, nil, nil, fmt.Errorf("kfp IR: PipelineJob field %q is not supported", k)
		}
	}
	job := &pipelinespec.PipelineJob{}
	if err := protojson.Unmarshal(main, job); err != nil {
		return nil, nil, nil, fmt.Errorf("kfp IR: malformed PipelineJob: %w", protoError(err))
	}
	var runtimeConfig json.RawMessage
	if job.RuntimeConfig != nil {
		runtimeConfig = protoJSON(job.RuntimeConfig)
	}
	var inside map[string]json.RawMessage
	if err := json.Unmarshal(inner, &inside); err != nil {
		return nil, nil, nil, fmt.Errorf("kfp IR: the pipelineSpec is not an object: %w", err)
	}
	return inner, inside, runtimeConfig, nil
}

// dropTaskNames removes taskInfo.taskName from every task: the 2.0 beta
// SDKs wrote it (a display name, as taskInfo.name is), pipeline_spec.proto
// no longer has it, and nothing runs differently for it.
func dropTaskNames(doc []byte) []byte {
	var top map[string]any
	if json.Unmarshal(doc, &top) != nil {
		return doc
	}
	changed := false
	dropIn := func(comp any) {
		dag, _ := asMap(comp)["dag"].(map[string]any)
		tasks, _ := dag["tasks"].(map[string]any)
		for _, task := range tasks {
			if info, ok := asMap(task)["taskInfo"].(map[string]any); ok {
				if _, has := info["taskName"]; has {
					delete(info, "taskName")
					changed = true
				}
			}
		}
	}
	dropIn(top["root"])
	for _, comp := range asMap(top["components"]) {
		dropIn(comp)
	}
	if !changed {
		return doc
	}
	out, err := json.Marshal(top)
	if err != nil {
		return doc
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
