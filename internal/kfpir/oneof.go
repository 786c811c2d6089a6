package kfpir

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

// dsl.OneOf: the output of an if/elif/else group is the output of the
// branch that ran. In Tekton a task taking a result of a task its when
// expressions skipped is skipped too, so a consumer cannot reference every
// branch's result. Instead each branch's producer publishes the value on
// the artifacts volume (a last step, kfp-task oneof publish, into its own
// directory of the run), and a selector task, ordered after every branch
// by runAfter (which runs it whether they ran or were skipped) and
// guarded by the group's own conditions, gives the one value published
// as its result "value" (kfp-task oneof select); it fails when no branch
// or more than one published. Consumers take the selector's result.
// Artifacts from dsl.OneOf stay refused.

const (
	// OneOfResult is the result of a dsl.OneOf selector task.
	OneOfResult = "value"
	// PublishStep is the step of a branch's producer publishing its value.
	PublishStep = "publish"
)

// oneOfOutput is a dsl.OneOf output of a group: its selector task's flat
// key, the group's conditions, and the branches' producers.
type oneOfOutput struct {
	key      string
	conds    []*flatCondition
	branches []*TaskOutputParameter
}

// oneOf resolves output k of group key, a dsl.OneOf, to its selector.
func (f *flattener) oneOf(consumer, key, k string, raw json.RawMessage) (*InputParameter, error) {
	sel := key + "/" + strings.TrimPrefix(k, "pipelinechannel--")
	if o := f.oneOfs[sel]; o != nil {
		return &InputParameter{oneOf: o}, nil
	}
	var spec struct {
		ParameterSelectors []struct {
			ProducerSubtask    string `json:"producerSubtask"`
			OutputParameterKey string `json:"outputParameterKey"`
		} `json:"parameterSelectors"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil || len(spec.ParameterSelectors) == 0 {
		return nil, fmt.Errorf("task %q: output %q of %q: a dsl.OneOf without parameter selectors", consumer, k, key)
	}
	o := &oneOfOutput{key: sel, conds: f.groupConds[key]}
	for _, s := range spec.ParameterSelectors {
		in, err := f.resolveOutput(consumer, key+"/"+s.ProducerSubtask, s.OutputParameterKey)
		if err != nil {
			return nil, err
		}
		src := in.TaskOutputParameter
		switch {
		case src == nil:
			return nil, unsupported(consumer, "output from dsl.OneOf", "a branch of %q is collected from a loop", key)
		case f.tasks[src.ProducerTask].loop != nil:
			return nil, unsupported(consumer, "output from dsl.OneOf inside a loop over a run-time list", "branch %q of %q: one selector would serve every iteration", src.ProducerTask, key)
		case f.tasks[src.ProducerTask].final:
			return nil, unsupported(consumer, "output from dsl.OneOf of exit tasks", "branch %q of %q runs in finally", src.ProducerTask, key)
		}
		o.branches = append(o.branches, src)
	}
	f.oneOfs[sel] = o
	if f.published == nil {
		f.published = map[string][]string{}
	}
	for _, b := range o.branches {
		if !slices.Contains(f.published[b.ProducerTask], b.OutputParameterKey) {
			f.published[b.ProducerTask] = append(f.published[b.ProducerTask], b.OutputParameterKey)
		}
	}
	return &InputParameter{oneOf: o}, nil
}

// rootOneOfs resolves the pipeline's outputs now, so that a dsl.OneOf
// only they take has its selector named with the others.
func (f *flattener) rootOneOfs() error {
	outs := f.spec.Root.DAG.Outputs
	if outs == nil {
		return nil
	}
	for _, key := range sortedKeys(outs.Parameters) {
		if o := outs.Parameters[key].ValueFromParameter; o != nil {
			if _, err := f.resolveOutput("", o.ProducerSubtask, o.OutputParameterKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// oneOfPath is where the producer publishes output k for a selector.
func (c *compiler) oneOfPath(producer, k string) string {
	return c.taskDir(producer) + "/oneof/" + c.results[producer][k]
}

// publish adds to a branch's producer the steps publishing its outputs
// that a dsl.OneOf takes.
func (b *taskBuild) publish() error {
	c := b.c
	keys := c.flattener.published[b.name]
	if len(keys) == 0 {
		return nil
	}
	args := []string{"oneof", "publish"}
	for _, k := range keys {
		r, ok := c.results[b.name][k]
		if !ok {
			return fmt.Errorf("task %q has no output parameter %q (a branch of a dsl.OneOf)", b.name, k)
		}
		args = append(args, "$(results."+r+".path)", c.oneOfPath(b.name, k))
	}
	b.ts.Steps = append(b.ts.Steps, tektonv1.Step{Name: PublishStep, Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args})
	return nil
}

// oneOfTask is the selector task of a dsl.OneOf output, with the
// condition tasks its guards need.
func (c *compiler) oneOfTask(key string) (tektonv1.PipelineTask, []tektonv1.PipelineTask, error) {
	o := c.flattener.oneOfs[key]
	pt := tektonv1.PipelineTask{Name: c.taskNames[key], DisplayName: kfpTaskName(key) + " (dsl.OneOf)"}
	if c.opts.LauncherImage == "" {
		return pt, nil, unsupported(key, "output from dsl.OneOf", "selecting the branch's value needs Options.LauncherImage (an image with %s)", LauncherPath)
	}
	if c.store != nil {
		return pt, nil, unsupported(key, "output from dsl.OneOf with an object-store pipeline root", "the branches publish their value on the artifacts volume, which runs of %s have not", c.rootURI)
	}
	args := []string{"oneof", "select", "$(results." + OneOfResult + ".path)"}
	for _, b := range o.branches {
		args = append(args, c.oneOfPath(b.ProducerTask, b.OutputParameterKey))
		pt.RunAfter = append(pt.RunAfter, c.taskNames[b.ProducerTask])
	}
	pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: tektonv1.TaskSpec{
		Workspaces: []tektonv1.WorkspaceDeclaration{{Name: ArtifactsWorkspace, MountPath: c.rootPath}},
		Results:    []tektonv1.TaskResult{{Name: OneOfResult, Type: tektonv1.ResultsTypeString, Description: "the value of the branch that ran"}},
		Steps:      []tektonv1.Step{{Name: "select", Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args}},
	}}
	pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace}}
	when, gates, err := c.whens(key, o.conds)
	pt.When = when
	return pt, gates, err
}
