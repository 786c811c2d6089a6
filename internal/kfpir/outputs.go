package kfpir

import (
	"encoding/json"
	"fmt"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// declareOutputs names the results and artifact directories of a task's
// component before any task refers to them.
func (c *compiler) declareOutputs(name string, t *TaskSpec) error {
	comp := c.spec.Components[t.ComponentRef.Name]
	c.results[name] = map[string]string{}
	c.artifacts[name] = map[string]string{}
	if comp == nil || comp.OutputDefinitions == nil {
		return nil
	}
	var err error
	if c.results[name], err = resultNames.assign(sortedKeys(comp.OutputDefinitions.Parameters)); err != nil {
		return fmt.Errorf("task %q: %w", name, err)
	}
	if c.artifacts[name], err = resultNames.assign(sortedKeys(comp.OutputDefinitions.Artifacts)); err != nil {
		return fmt.Errorf("task %q: %w", name, err)
	}
	return nil
}

func (c *compiler) annotateOutputs(p *tektonv1.Pipeline) error {
	var outputs []contract.OutputArtifact
	for _, task := range sortedKeys(c.artifacts) {
		if t := c.flat[task]; (t != nil && t.loop != nil) || c.importers[task] != nil {
			continue // one directory per TaskRun, not known before the run; or not the run's
		}
		for _, key := range sortedKeys(c.artifacts[task]) {
			outputs = append(outputs, contract.OutputArtifact{Component: task, Output: key, URI: c.artifactURI(task, key)})
		}
	}
	if len(outputs) == 0 {
		return nil
	}
	data, err := json.Marshal(outputs)
	if err != nil {
		return err
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[contract.AnnotationOutputs] = string(data)
	return nil
}

// artifactPath and artifactURI locate the artifact key of task under the
// pipeline root: <root>/<PipelineRun name>/<Tekton task name>/<artifact>.
func (c *compiler) artifactPath(task, key string) string {
	return c.taskDir(task) + "/" + c.artifacts[task][key]
}

// taskDir is the directory holding the output artifacts of task.
func (c *compiler) taskDir(task string) string {
	base := "$(workspaces." + ArtifactsWorkspace + ".path)"
	if c.store != nil {
		base = c.rootPath // the emptyDir standing for the root (objects.go)
	}
	return base + "/$(context.pipelineRun.name)/" + c.taskDirName(task)
}

func (c *compiler) artifactURI(task, key string) string {
	return c.rootURI + "/$(context.pipelineRun.name)/" + c.taskDirName(task) + "/" + c.artifacts[task][key]
}

// taskDirName names a task's artifact directory: its Tekton name, or its
// TaskRun's for a task fanned out over a run-time loop's items.
func (c *compiler) taskDirName(task string) string {
	if t := c.flat[task]; t != nil && t.loop != nil {
		return "$(context.taskRun.name)"
	}
	return c.taskNames[task]
}

func (c *compiler) pipelineResults() ([]tektonv1.PipelineResult, error) {
	outs := c.spec.Root.DAG.Outputs
	if outs == nil {
		return nil, nil
	}
	// Pipeline results are named over the outputs of both kinds: an
	// artifact from dsl.OneOf has one.
	names, err := resultNames.assign(append(sortedKeys(outs.Parameters), sortedKeys(outs.Artifacts)...))
	if err != nil {
		return nil, err
	}
	var results []tektonv1.PipelineResult
	// An output artifact of the pipeline is its producer's, which the
	// outputs annotation already lists: it must exist. One from dsl.OneOf
	// is also the selector's result, the {uri, metadata} of the branch's.
	for _, key := range sortedKeys(outs.Artifacts) {
		var sel struct {
			ArtifactSelectors []artifactSelector `json:"artifactSelectors"`
		}
		if err := json.Unmarshal(outs.Artifacts[key], &sel); err != nil || len(sel.ArtifactSelectors) != 1 {
			return nil, fmt.Errorf("pipeline output artifact %q: want one artifact selector", key)
		}
		src := sel.ArtifactSelectors[0]
		a, err := c.flattener.resolveArtifact("", key, src.ProducerSubtask, src.OutputArtifactKey)
		if err != nil {
			return nil, fmt.Errorf("pipeline output artifact %q: %w", key, err)
		}
		if a.oneOf != nil {
			results = append(results, tektonv1.PipelineResult{Name: names[key], Type: tektonv1.ResultsTypeString,
				Description: "output artifact " + key + " (dsl.OneOf): its {uri, metadata} (JSON)",
				Value:       *tektonv1.NewStructuredValues("$(tasks." + c.taskNames[a.oneOf.key] + ".results." + OneOfResult + ")")})
			continue
		}
		if a.collectedFrom != nil {
			return nil, unsupported("", "pipeline output artifact collected from a loop over a run-time list", "output %q: its artifacts' locations are known only to the run", key)
		}
		froms := a.collected // a loop's, each iteration's
		if a.TaskOutputArtifact != nil {
			froms = []*TaskOutputArtifact{a.TaskOutputArtifact}
		}
		for _, from := range froms {
			if _, ok := c.artifacts[from.ProducerTask][from.OutputArtifactKey]; !ok {
				return nil, fmt.Errorf("pipeline output artifact %q: task %q has no output artifact %q", key, from.ProducerTask, from.OutputArtifactKey)
			}
		}
	}
	for _, key := range sortedKeys(outs.Parameters) {
		o := outs.Parameters[key]
		if len(o.ValueFromOneof) > 0 {
			return nil, unsupported("", "pipeline output from dsl.OneOf", "output %q", key)
		}
		if o.ValueFromParameter == nil {
			return nil, fmt.Errorf("pipeline output %q has no source", key)
		}
		in, err := c.flattener.resolveOutput("", o.ValueFromParameter.ProducerSubtask, o.ValueFromParameter.OutputParameterKey)
		if err != nil {
			return nil, fmt.Errorf("pipeline output %q: %w", key, err)
		}
		if in.oneOf != nil {
			results = append(results, tektonv1.PipelineResult{Name: names[key], Type: tektonv1.ResultsTypeString,
				Value: *tektonv1.NewStructuredValues("$(tasks." + c.taskNames[in.oneOf.key] + ".results." + OneOfResult + ")")})
			continue
		}
		if in.collected != nil || in.collectedFrom != nil {
			pr, err := c.collectedResult(key, names[key], in)
			if err != nil {
				return nil, err
			}
			results = append(results, pr)
			continue
		}
		ref, err := c.outputRef(key, in.TaskOutputParameter)
		if err != nil {
			return nil, err
		}
		results = append(results, tektonv1.PipelineResult{Name: names[key], Type: tektonv1.ResultsTypeString, Value: *tektonv1.NewStructuredValues(ref)})
	}
	return results, nil
}
