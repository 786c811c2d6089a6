package kfpir

import (
	"fmt"
	"strconv"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

// Loops. A dsl.ParallelFor over a list known when compiling is unrolled by
// flatten (one copy of its tasks per item, the item a constant). One over
// a list known only at run time (a pipeline parameter, a task's output)
// becomes a fan-out: the loop's items task (kfp-task items, in
// Options.LauncherImage) turns the list into Tekton array results, the
// items as text (a field of each when a task takes one, the SDK's
// parseJson selector applied), and each of the loop's tasks runs once per
// item through Tekton's Matrix over the array. A task of the loop taking
// no item still runs once per item. Outputs collected from a loop
// (dsl.Collected) reach the consumer as a list: from an unrolled loop one
// param per iteration, from a run-time loop Tekton's aggregated array
// result; either way the consumer runs under the launcher, which builds
// the LIST value of the executor input.

// ItemsResult is the prefix of a loop's items task's array results.
const ItemsResult = "items"

// loopItemParam is the param fanning out a loop's task that takes no item.
const loopItemParam = "kfp-loop-item"

// itemsKey is the flat key of a run-time loop's items task: the loop's.
func itemsKey(loop *flatLoop) string { return loop.key }

// outerSelector prefixes, among a loop's selectors, those of the item of
// the loop around it (a selector never holds a NUL).
const outerSelector = "\x00outer "

// selectors are the item selectors a loop's tasks use ("" for the whole
// item, always first; those of the outer loop's item, for a loop over a
// field of it, prefixed by outerSelector), each one array result of the
// items task.
func (c *compiler) selectors(loop *flatLoop) []string {
	if loop.selectors != nil {
		return loop.selectors
	}
	set := map[string]bool{"": true}
	for _, t := range c.flat {
		if t.loop != loop {
			continue
		}
		for _, in := range t.Inputs.Parameters {
			switch {
			case in.loopItem == loop:
				set[in.selector] = true
			case in.loopItem != nil && in.loopItem == loop.outer:
				set[outerSelector+in.selector] = true
			}
		}
	}
	loop.selectors = sortedKeys(set)
	return loop.selectors
}

func (c *compiler) itemsRef(loop *flatLoop, selector string) string {
	if src := loop.artifacts; src != nil {
		// A loop over artifacts: each item is one {uri, metadata}, as the
		// fanned-out producer reported it.
		return "$(tasks." + c.taskNames[src.ProducerTask] + ".results." + c.artifactResult(src.ProducerTask, src.OutputArtifactKey) + "[*])"
	}
	for j, s := range c.selectors(loop) {
		if s == selector {
			return "$(tasks." + c.taskNames[itemsKey(loop)] + ".results." + ItemsResult + "-" + strconv.Itoa(j) + "[*])"
		}
	}
	return "" // every selector of the loop's tasks is in selectors
}

// itemsTask is a run-time loop's items task, with the condition tasks
// it is the first to need (the loop's conditions guard it).
func (c *compiler) itemsTask(loop *flatLoop) ([]tektonv1.PipelineTask, error) {
	if loop.artifacts != nil {
		return nil, nil // its items are its producer's results
	}
	if c.opts.LauncherImage == "" {
		return nil, unsupported(loop.key, "loop (dsl.ParallelFor) over a run-time list", "its fan-out needs Options.LauncherImage (an image with %s)", LauncherPath)
	}
	when, gates, err := c.whens(loop.key, loop.conds)
	if err != nil {
		return nil, err
	}
	items := loop.items
	args := []string{"items", "--list", "$(params.list)"}
	if loop.outer != nil {
		// Over the (outer item, inner item) pairs: the outer loop's list.
		items = loop.outer.items
		args = append(args, "--nest", loop.items.selector)
	}
	list, _, err := c.inputValue(loop.key, "items", items, "LIST")
	if err != nil {
		return nil, err
	}
	var results []tektonv1.TaskResult
	for j, sel := range c.selectors(loop) {
		name := ItemsResult + "-" + strconv.Itoa(j)
		flag, desc := "--result", "the items as text"
		if outer, ok := strings.CutPrefix(sel, outerSelector); ok {
			flag, sel, desc = "--outer-result", outer, "the outer loop's item of each pair"
		}
		args = append(args, flag, sel, "$(results."+name+".path)")
		if sel != "" {
			desc += ", the field " + sel
		}
		results = append(results, tektonv1.TaskResult{Name: name, Type: tektonv1.ResultsTypeArray, Description: desc})
	}
	pt := tektonv1.PipelineTask{
		Name: c.taskNames[itemsKey(loop)], DisplayName: kfpTaskName(loop.key) + " (items)",
		Params: tektonv1.Params{{Name: "list", Value: *tektonv1.NewStructuredValues(list)}},
		When:   when,
		TaskSpec: &tektonv1.EmbeddedTask{TaskSpec: tektonv1.TaskSpec{
			Params:  tektonv1.ParamSpecs{{Name: "list", Type: tektonv1.ParamTypeString, Description: "the loop's list (JSON)"}},
			Results: results,
			Steps:   []tektonv1.Step{{Name: "items", Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args}},
		}},
	}
	c.gates[itemsKey(loop)] = true
	return append(gates, pt), nil
}

// collects says an input is a loop's collected outputs.
func collects(special map[string]*InputParameter) bool {
	for _, in := range special {
		if in.collected != nil || in.collectedFrom != nil {
			return true
		}
	}
	return false
}

// loopParam binds input key (TaskSpec param local, spec ps) to a loop's
// item (the Matrix) or to a loop's collected outputs.
func (c *compiler) loopParam(pt *tektonv1.PipelineTask, ts *tektonv1.TaskSpec, lt *launchedTask, t *TaskSpec, name, key, local string, ps tektonv1.ParamSpec, in *InputParameter) error {
	switch {
	case in.loopItem != nil:
		if pt.Matrix != nil {
			return unsupported(name, "two fields of a run-time loop's item in one task", "input parameter %q: Tekton's Matrix would run every combination", key)
		}
		sel := in.selector
		if in.loopItem != t.loop {
			sel = outerSelector + sel // the outer loop's, paired with the inner items
		}
		ts.Params = append(ts.Params, ps)
		pt.Matrix = &tektonv1.Matrix{Params: tektonv1.Params{{Name: local, Value: *tektonv1.NewStructuredValues(c.itemsRef(t.loop, sel))}}}
		lt.params[key] = local
	case in.collected != nil:
		return c.collectedParam(pt, ts, lt, name, key, local, in)
	default:
		src := in.collectedFrom
		if lt.rest != "" {
			return unsupported(name, "two inputs collected from loops over run-time lists", "input parameters %q and %q", lt.rest, key)
		}
		r, ok := c.results[src.ProducerTask][src.OutputParameterKey]
		if !ok {
			return unsupported(name, "collected output", "task %q has no output parameter %q", src.ProducerTask, src.OutputParameterKey)
		}
		if err := c.refuseNestedCollect(name, key, src.ProducerTask); err != nil {
			return err
		}
		ts.Params = append(ts.Params, tektonv1.ParamSpec{Name: local, Type: tektonv1.ParamTypeArray, Description: "the collected " + key})
		pt.Params = append(pt.Params, tektonv1.Param{Name: local, Value: *tektonv1.NewStructuredValues("$(tasks." + c.taskNames[src.ProducerTask] + ".results." + r + "[*])")})
		lt.rest, lt.restParam, lt.restType = key, local, c.outputType(src)
	}
	return nil
}

// fanOut runs a task of a run-time loop that takes no item once per item.
func (c *compiler) fanOut(pt *tektonv1.PipelineTask, ts *tektonv1.TaskSpec, name string, t *TaskSpec, local map[string]string) error {
	if t.loop == nil || pt.Matrix != nil {
		return nil
	}
	for _, a := range t.Inputs.Artifacts {
		if a.loopItem != nil {
			return nil // the loop's artifact fans it out (loopArtifact)
		}
	}
	for _, l := range local {
		if l == loopItemParam {
			return unsupported(name, "input named "+loopItemParam, "in a loop over a run-time list")
		}
	}
	ts.Params = append(ts.Params, tektonv1.ParamSpec{Name: loopItemParam, Type: tektonv1.ParamTypeString, Description: "the loop's item (unused: the task runs once per item)"})
	pt.Matrix = &tektonv1.Matrix{Params: tektonv1.Params{{Name: loopItemParam, Value: *tektonv1.NewStructuredValues(c.itemsRef(t.loop, ""))}}}
	return nil
}

// outputType is the KFP type of a task's output parameter.
func (c *compiler) outputType(src *TaskOutputParameter) string {
	t := c.flat[src.ProducerTask]
	if t == nil {
		return ""
	}
	if comp := c.spec.Components[t.ComponentRef.Name]; comp != nil && comp.OutputDefinitions != nil {
		if def := comp.OutputDefinitions.Parameters[src.OutputParameterKey]; def != nil {
			return def.ParameterType
		}
	}
	return ""
}

// loopArtifact binds input artifact key to the item of a run-time loop
// over artifacts: the Matrix gives each TaskRun one artifact's
// {uri, metadata}, which the launcher takes (--artifact-json).
func (b *taskBuild) loopArtifact(key string, a *InputArtifact) error {
	c, name := b.c, b.name
	if c.store != nil {
		return unsupported(name, "loop over a run-time artifact list with an object-store pipeline root", "input artifact %q: its URI is known only in the TaskRun, after the fetch step's arguments", key)
	}
	if def := b.in.Artifacts[key]; def == nil {
		return fmt.Errorf("task %q: input artifact %q is not declared by component %q", name, key, b.t.ComponentRef.Name)
	} else if def.IsArtifactList {
		return unsupported(name, "artifact list from a single artifact", "input artifact %q (a loop's item)", key)
	}
	local := paramNames.sanitise(artifactResultPrefix + key)
	for _, l := range b.local {
		if l == local {
			return unsupported(name, "input parameter named "+l, "its param would be input artifact %q's", key)
		}
	}
	if b.pt.Matrix != nil {
		return unsupported(name, "two items of a run-time loop in one task", "input artifact %q", key)
	}
	b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: local, Type: tektonv1.ParamTypeString, Description: "the loop's artifact " + key + ": its {uri, metadata} (JSON)"})
	b.pt.Matrix = &tektonv1.Matrix{Params: tektonv1.Params{{Name: local, Value: *tektonv1.NewStructuredValues(c.itemsRef(a.loopItem, ""))}}}
	b.launched.artifactJSON[key] = local
	return nil
}

// refuseNestedCollect refuses the outputs of a task of a loop inside a
// run-time loop collected by key: Tekton gathers every pair's, not one
// outer iteration's.
func (c *compiler) refuseNestedCollect(name, key, producer string) error {
	if p := c.flat[producer]; p != nil && p.loop != nil && p.loop.outer != nil {
		return unsupported(name, "collected output of a loop inside a loop over a run-time list", "input %q from %q: Tekton gathers the results of every (outer, inner) pair", key, producer)
	}
	return nil
}
