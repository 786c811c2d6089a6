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
//
// An artifact from dsl.OneOf goes the same way as its {uri, metadata}:
// each branch's producer runs under the launcher, which writes that as a
// result (--artifact-result, collected.go), and publishes it; the
// selector gives the one published, and consumers, launched, take it
// whole (--artifact-json). A pipeline output artifact from dsl.OneOf is
// the selector's result as a Pipeline result named after the output (the
// branches' artifacts are listed in the outputs annotation as any task's).
// With an object-store pipeline root there is no volume to publish on:
// refused by name.

const (
	// OneOfResult is the result of a dsl.OneOf selector task.
	OneOfResult = "value"
	// PublishStep is the step of a branch's producer publishing its value.
	PublishStep = "publish"
)

// oneOfOutput is a dsl.OneOf output of a group: its selector task's flat
// key, the group's conditions, and the branches' producers: of a
// parameter (branches) or of an artifact (artifacts).
type oneOfOutput struct {
	key       string
	conds     []*flatCondition
	branches  []*TaskOutputParameter
	artifacts []*TaskOutputArtifact
}

// oneOfBranch refuses a branch producer that cannot publish.
func (f *flattener) oneOfBranch(consumer, key, producer string) error {
	switch t := f.tasks[producer]; {
	case t == nil:
		return fmt.Errorf("task %q: a branch of %q has no producer task %q", consumer, key, producer)
	case t.loop != nil:
		return unsupported(consumer, "output from dsl.OneOf inside a loop over a run-time list", "branch %q of %q: one selector would serve every iteration", producer, key)
	case t.final:
		return unsupported(consumer, "output from dsl.OneOf of exit tasks", "branch %q of %q runs in finally", producer, key)
	}
	return nil
}

// oneOf resolves output k of group key, a dsl.OneOf, to its selector.
func (f *flattener) oneOf(consumer, key, k string, raw json.RawMessage) (*InputParameter, error) {
	sel := key + "/" + strings.TrimPrefix(k, "pipelinechannel--")
	if o := f.oneOfs[sel]; o != nil {
		if o.artifacts != nil {
			return nil, fmt.Errorf("task %q: %q names both an output parameter and an output artifact of %q from dsl.OneOf", consumer, k, key)
		}
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
		if src == nil {
			return nil, unsupported(consumer, "output from dsl.OneOf", "a branch of %q is collected from a loop or is a dsl.OneOf", key)
		}
		if err := f.oneOfBranch(consumer, key, src.ProducerTask); err != nil {
			return nil, err
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

// oneOfArtifact resolves output artifact ak of group key, a dsl.OneOf of
// the artifacts sels, to its selector.
func (f *flattener) oneOfArtifact(consumer, k, key, ak string, sels []artifactSelector) (*InputArtifact, error) {
	sel := key + "/" + strings.TrimPrefix(ak, "pipelinechannel--")
	if o := f.oneOfs[sel]; o != nil {
		if o.artifacts == nil {
			return nil, fmt.Errorf("task %q: %q names both an output parameter and an output artifact of %q from dsl.OneOf", consumer, ak, key)
		}
		return &InputArtifact{oneOf: o}, nil
	}
	o := &oneOfOutput{key: sel, conds: f.groupConds[key]}
	for _, s := range sels {
		in, err := f.resolveArtifact(consumer, k, key+"/"+s.ProducerSubtask, s.OutputArtifactKey)
		if err != nil {
			return nil, err
		}
		src := in.TaskOutputArtifact
		if src == nil {
			return nil, unsupported(consumer, "output artifact from dsl.OneOf", "a branch of %q is collected from a loop or is a dsl.OneOf", key)
		}
		if err := f.oneOfBranch(consumer, key, src.ProducerTask); err != nil {
			return nil, err
		}
		o.artifacts = append(o.artifacts, src)
	}
	if f.oneOfs[sel] != nil { // a parameter's (checked above for artifacts)
		return nil, fmt.Errorf("task %q: %q names both an output parameter and an output artifact of %q from dsl.OneOf", consumer, ak, key)
	}
	f.oneOfs[sel] = o
	return &InputArtifact{oneOf: o}, nil
}

// artifactSelector is one of a DAG output artifact's artifactSelectors.
type artifactSelector struct {
	ProducerSubtask   string `json:"producerSubtask"`
	OutputArtifactKey string `json:"outputArtifactKey"`
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
	for _, key := range sortedKeys(outs.Artifacts) {
		var sel struct {
			ArtifactSelectors []artifactSelector `json:"artifactSelectors"`
		}
		if json.Unmarshal(outs.Artifacts[key], &sel) == nil && len(sel.ArtifactSelectors) == 1 {
			s := sel.ArtifactSelectors[0]
			if _, err := f.resolveArtifact("", key, s.ProducerSubtask, s.OutputArtifactKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// oneOfArtifacts are the branches' artifacts that dsl.OneOf selectors
// take: their producers report them as results (collected.go).
func (c *compiler) oneOfArtifacts() []*TaskOutputArtifact {
	var out []*TaskOutputArtifact
	for _, key := range sortedKeys(c.flattener.oneOfs) {
		out = append(out, c.flattener.oneOfs[key].artifacts...)
	}
	return out
}

// publishedArtifacts are the output artifacts of task that a dsl.OneOf
// takes, sorted.
func (c *compiler) publishedArtifacts(task string) []string {
	var keys []string
	for _, a := range c.oneOfArtifacts() {
		if a.ProducerTask == task && !slices.Contains(keys, a.OutputArtifactKey) {
			keys = append(keys, a.OutputArtifactKey)
		}
	}
	slices.Sort(keys)
	return keys
}

// oneOfPath is where the producer publishes output k for a selector;
// oneOfArtifactPath where it publishes output artifact k's result.
func (c *compiler) oneOfPath(producer, k string) string {
	return c.taskDir(producer) + "/" + oneOfDir + "/" + c.results[producer][k]
}

func (c *compiler) oneOfArtifactPath(producer, k string) string {
	return c.taskDir(producer) + "/" + oneOfDir + "/" + c.artifactResult(producer, k)
}

// oneOfDir is the directory of the values a producer publishes, beside
// its output artifacts.
const oneOfDir = "oneof"

// publish adds to a branch's producer the steps publishing its outputs
// that a dsl.OneOf takes.
func (b *taskBuild) publish() error {
	c := b.c
	keys, artifacts := c.flattener.published[b.name], c.publishedArtifacts(b.name)
	if len(keys) == 0 && len(artifacts) == 0 {
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
	for _, k := range artifacts {
		r, ok := b.launched.artifactResults[k]
		if !ok {
			return fmt.Errorf("task %q does not report output artifact %q (a branch of a dsl.OneOf)", b.name, k)
		}
		args = append(args, "$(results."+r+".path)", c.oneOfArtifactPath(b.name, k))
	}
	for key, dir := range c.artifacts[b.name] {
		if dir == oneOfDir {
			return unsupported(b.name, "output artifact named "+oneOfDir+" on a branch of a dsl.OneOf", "artifact %q: its directory is where the branch publishes", key)
		}
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
	desc := "the value of the branch that ran"
	for _, a := range o.artifacts {
		if c.importers[a.ProducerTask] != nil {
			return pt, nil, unsupported(key, "output artifact from dsl.OneOf of importers", "branch %q: an importer runs no pod to publish its artifact", a.ProducerTask)
		}
		args = append(args, c.oneOfArtifactPath(a.ProducerTask, a.OutputArtifactKey))
		pt.RunAfter = append(pt.RunAfter, c.taskNames[a.ProducerTask])
		desc = "the artifact of the branch that ran: its {uri, metadata} (JSON)"
	}
	pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: tektonv1.TaskSpec{
		Workspaces: []tektonv1.WorkspaceDeclaration{{Name: ArtifactsWorkspace, MountPath: c.rootPath}},
		Results:    []tektonv1.TaskResult{{Name: OneOfResult, Type: tektonv1.ResultsTypeString, Description: desc}},
		Steps:      []tektonv1.Step{{Name: "select", Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args}},
	}}
	pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace}}
	when, gates, err := c.whens(key, o.conds)
	pt.When = when
	return pt, gates, err
}

// takesOneOfArtifact says a task takes an artifact from dsl.OneOf: it is
// launched, to take it whole from the selector.
func takesOneOfArtifact(inputs *TaskInputs) bool {
	for _, a := range inputs.Artifacts {
		if a.oneOf != nil {
			return true
		}
	}
	return false
}

// oneOfInput binds input artifact key to a dsl.OneOf's selector: its
// result, the chosen branch's {uri, metadata}, as a param the launcher
// reads (--artifact-json).
func (b *taskBuild) oneOfInput(key string, o *oneOfOutput) error {
	c, name := b.c, b.name
	if c.store != nil {
		return unsupported(name, "output from dsl.OneOf with an object-store pipeline root", "input artifact %q: the branches publish their artifact on the artifacts volume, which runs of %s have not", key, c.rootURI)
	}
	def, ok := b.in.Artifacts[key]
	switch {
	case !ok:
		return fmt.Errorf("task %q: input artifact %q is not declared by component %q", name, key, b.t.ComponentRef.Name)
	case def.IsArtifactList:
		return unsupported(name, "artifact list from a single artifact", "input artifact %q (from dsl.OneOf)", key)
	case strings.ContainsAny(key, "=:"):
		return unsupported(name, "artifact name with '=' or ':'", "input artifact %q", key)
	}
	local := paramNames.sanitise(artifactResultPrefix + key)
	for _, l := range b.local {
		if l == local {
			return unsupported(name, "input parameter named "+l, "its param would be input artifact %q's (from dsl.OneOf)", key)
		}
	}
	b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: local, Type: tektonv1.ParamTypeString, Description: "input artifact " + key + " from dsl.OneOf: its {uri, metadata} (JSON)"})
	b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: local, Value: *tektonv1.NewStructuredValues("$(tasks." + c.taskNames[o.key] + ".results." + OneOfResult + ")")})
	b.launched.oneOfArtifacts[key] = local
	return nil
}
