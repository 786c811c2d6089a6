package kfpir

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

// Collected outputs of loops (dsl.Collected) beyond a flat list of
// parameters. Over nested unrolled loops KFP collects a list of lists:
// the consumer gets every value as an item param and the launcher
// regroups them (--item-shape). An artifact list (isArtifactList) is flat
// in KFP, every iteration's artifact in order; its producers run under the
// launcher, which writes each artifact's {uri, metadata} as a result
// (--artifact-result): the consumer's launcher reads those, one param per
// iteration of an unrolled loop (--artifact-item) or the gathered results
// of a fanned-out task (--artifact-rest), so each iteration's URI, its own
// TaskRun's under a Matrix, and metadata reach the executor input.

// artifactResultPrefix names the result holding an output artifact's
// {uri, metadata}.
const artifactResultPrefix = "kfp-artifact-"

// flattenCollected is the values of a collected list in order and how
// they nest: a count for a list of values, a list of shapes for a list of
// lists.
func flattenCollected(in *InputParameter) ([]*InputParameter, any, error) {
	nested := false
	for _, item := range in.collected {
		nested = nested || item.collected != nil
	}
	if !nested {
		return in.collected, len(in.collected), nil
	}
	var leaves []*InputParameter
	shape := []any{}
	for _, item := range in.collected {
		if item.collected == nil {
			return nil, nil, errors.New("a collected list mixes values and lists")
		}
		l, s, err := flattenCollected(item)
		if err != nil {
			return nil, nil, err
		}
		leaves, shape = append(leaves, l...), append(shape, s)
	}
	return leaves, shape, nil
}

// collectedParam binds input key to the collected outputs of an unrolled
// loop: one param per value, in order, regrouped by the launcher when
// the loops nest.
func (c *compiler) collectedParam(pt *tektonv1.PipelineTask, ts *tektonv1.TaskSpec, lt *launchedTask, name, key, local string, in *InputParameter) error {
	leaves, shape, err := flattenCollected(in)
	if err != nil {
		return fmt.Errorf("task %q: input parameter %q: %w", name, key, err)
	}
	typ := ""
	for i, src := range leaves {
		typ = c.outputType(src.TaskOutputParameter)
		v, _, err := c.inputValue(name, key, src, typ)
		if err != nil {
			return err
		}
		p := local + "-" + strconv.Itoa(i)
		ts.Params = append(ts.Params, tektonv1.ParamSpec{Name: p, Type: tektonv1.ParamTypeString, Description: typ + ": item " + strconv.Itoa(i) + " of " + key})
		pt.Params = append(pt.Params, tektonv1.Param{Name: p, Value: *tektonv1.NewStructuredValues(v)})
		lt.items[key] = append(lt.items[key], p)
	}
	lt.itemTypes[key] = typ
	if _, flat := shape.(int); !flat {
		data, err := json.Marshal(shape)
		if err != nil {
			return err
		}
		lt.itemShapes[key] = string(data)
	}
	return nil
}

// reportedArtifacts are the output artifacts some task takes in an
// artifact list, by producer: their producers write them as results.
func (c *compiler) reportedArtifacts() map[string]map[string]bool {
	if c.reported != nil {
		return c.reported
	}
	c.reported = map[string]map[string]bool{}
	add := func(src *TaskOutputArtifact) {
		if c.reported[src.ProducerTask] == nil {
			c.reported[src.ProducerTask] = map[string]bool{}
		}
		c.reported[src.ProducerTask][src.OutputArtifactKey] = true
	}
	for _, src := range c.oneOfArtifacts() { // the branches of dsl.OneOf (oneof.go)
		add(src)
	}
	for _, t := range c.flat {
		if t.loop != nil && t.loop.artifacts != nil {
			add(t.loop.artifacts)
		}
		for _, a := range t.Inputs.Artifacts {
			for _, src := range a.collected {
				add(src)
			}
			if a.collectedFrom != nil {
				add(a.collectedFrom)
			}
		}
	}
	return c.reported
}

// artifactResult names the result of a task reporting output artifact key.
func (c *compiler) artifactResult(task, key string) string {
	return artifactResultPrefix + c.artifacts[task][key]
}

// reportArtifacts declares the results of the task's reported artifacts.
func (b *taskBuild) reportArtifacts() error {
	for _, key := range sortedKeys(b.c.reportedArtifacts()[b.name]) {
		r := b.c.artifactResult(b.name, key)
		for out, taken := range b.c.results[b.name] {
			if taken == r {
				return unsupported(b.name, "output parameter named "+out, "its result would be output artifact %q's", key)
			}
		}
		b.ts.Results = append(b.ts.Results, tektonv1.TaskResult{Name: r, Type: tektonv1.ResultsTypeString,
			Description: "output artifact " + key + ": its {uri, metadata} (JSON)"})
		b.launched.artifactResults[key] = r
	}
	return nil
}

// collectsArtifacts says a task takes an artifact list.
func collectsArtifacts(inputs *TaskInputs) bool {
	for _, a := range inputs.Artifacts {
		if a.collected != nil || a.collectedFrom != nil || a.loopItem != nil {
			return true
		}
	}
	return false
}

// artifactList binds input artifact key to a loop's collected artifacts:
// one param per iteration of an unrolled loop, the gathered results of a
// fanned-out task.
func (b *taskBuild) artifactList(key string, a *InputArtifact) error {
	c, name, lt := b.c, b.name, &b.launched
	if c.store != nil {
		// The fetch step takes URIs, not the reported {uri, metadata} lists.
		return unsupported(name, "dsl.Collected artifacts with an object-store pipeline root", "input artifact %q", key)
	}
	// An input not marked isArtifactList (SDKs before 2.0 did not mark
	// Input[List[Artifact]]) still gets the list, as KFP's driver gives it.
	if _, ok := b.in.Artifacts[key]; !ok {
		return fmt.Errorf("task %q: input artifact %q is not declared by component %q", name, key, b.t.ComponentRef.Name)
	}
	local := paramNames.sanitise(artifactResultPrefix + key)
	for _, l := range b.local {
		if l == local || strings.HasPrefix(l, local+"-") {
			return unsupported(name, "input parameter named "+l, "its param would be input artifact list %q's", key)
		}
	}
	srcs := a.collected
	if a.collectedFrom != nil {
		srcs = []*TaskOutputArtifact{a.collectedFrom}
	}
	for _, src := range srcs {
		if c.importers[src.ProducerTask] != nil {
			return unsupported(name, "artifact list of importers", "input artifact %q from %q", key, src.ProducerTask)
		}
		if _, ok := c.artifacts[src.ProducerTask][src.OutputArtifactKey]; !ok {
			return fmt.Errorf("task %q: input artifact %q: task %q has no output artifact %q", name, key, src.ProducerTask, src.OutputArtifactKey)
		}
	}
	if a.collectedFrom != nil {
		if err := c.refuseNestedCollect(name, key, a.collectedFrom.ProducerTask); err != nil {
			return err
		}
		if lt.rest != "" {
			return unsupported(name, "two inputs collected from loops over run-time lists", "inputs %q and %q", lt.rest, key)
		}
		ref := "$(tasks." + c.taskNames[a.collectedFrom.ProducerTask] + ".results." + c.artifactResult(a.collectedFrom.ProducerTask, a.collectedFrom.OutputArtifactKey) + "[*])"
		b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: local, Type: tektonv1.ParamTypeArray, Description: "the collected artifacts " + key})
		b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: local, Value: *tektonv1.NewStructuredValues(ref)})
		lt.rest, lt.restParam, lt.restArtifact = key, local, true
		return nil
	}
	lt.artifactItems[key] = []string{}
	for i, src := range a.collected {
		p := local + "-" + strconv.Itoa(i)
		ref := "$(tasks." + c.taskNames[src.ProducerTask] + ".results." + c.artifactResult(src.ProducerTask, src.OutputArtifactKey) + ")"
		b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: p, Type: tektonv1.ParamTypeString, Description: "item " + strconv.Itoa(i) + " of the artifact list " + key})
		b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: p, Value: *tektonv1.NewStructuredValues(ref)})
		lt.artifactItems[key] = append(lt.artifactItems[key], p)
		b.after[src.ProducerTask] = true
	}
	return nil
}

// collectArgs are the launcher's arguments for a task's collected lists
// (before the arguments after --, restArgs).
func (lt launchedTask) collectArgs() []string {
	var args []string
	for _, key := range sortedKeys(lt.itemTypes) {
		args = append(args, "--item-type", key+"="+lt.itemTypes[key])
		for _, p := range lt.items[key] {
			args = append(args, "--item", key+"=$(params."+p+")")
		}
		if shape, ok := lt.itemShapes[key]; ok {
			args = append(args, "--item-shape", key+"="+shape)
		}
	}
	for _, key := range sortedKeys(lt.artifactJSON) {
		args = append(args, "--artifact-json", key+"=$(params."+lt.artifactJSON[key]+")")
	}
	for _, key := range sortedKeys(lt.artifactItems) {
		for _, p := range lt.artifactItems[key] {
			args = append(args, "--artifact-item", key+"=$(params."+p+")")
		}
	}
	switch {
	case lt.rest == "":
	case lt.restArtifact:
		args = append(args, "--artifact-rest", lt.rest)
	default:
		args = append(args, "--collect-rest", lt.rest+"="+lt.restType)
	}
	for _, key := range sortedKeys(lt.artifactResults) {
		args = append(args, "--artifact-result", key+"=$(results."+lt.artifactResults[key]+".path)")
	}
	return args
}

// collectedResult is a pipeline output collected from a loop, as an array
// result: a run-time loop's gathered results, or one item per iteration
// of an unrolled loop; over nested loops each item is the JSON text of
// an inner list (only for values whose text is JSON: not strings).
func (c *compiler) collectedResult(out, result string, in *InputParameter) (tektonv1.PipelineResult, error) {
	pr := tektonv1.PipelineResult{Name: result, Type: tektonv1.ResultsTypeArray}
	if src := in.collectedFrom; src != nil {
		ref, err := c.outputRef(out, src)
		pr.Value = *tektonv1.NewStructuredValues(strings.TrimSuffix(ref, ")") + "[*])")
		return pr, err
	}
	items := []string{}
	for _, item := range in.collected {
		text, err := c.collectedText(out, item, item.collected == nil)
		if err != nil {
			return pr, err
		}
		items = append(items, text)
	}
	if len(items) == 0 {
		return pr, unsupported("", "pipeline output collected from a loop without iterations", "output %q: Tekton has no empty array result", out)
	}
	pr.Value = *tektonv1.NewStructuredValues(items[0], items[1:]...)
	return pr, nil
}

// collectedText is a collected value as a Tekton reference: a value as it
// is (top), a value within a list of lists as its JSON, a list as JSON.
func (c *compiler) collectedText(out string, in *InputParameter, top bool) (string, error) {
	if in.collected == nil {
		ref, err := c.outputRef(out, in.TaskOutputParameter)
		if err == nil && !top && c.outputType(in.TaskOutputParameter) == "STRING" {
			err = unsupported("", "pipeline output of strings collected from nested loops", "output %q: the strings would have to be quoted as JSON", out)
		}
		return ref, err
	}
	var items []string
	for _, item := range in.collected {
		text, err := c.collectedText(out, item, false)
		if err != nil {
			return "", err
		}
		items = append(items, text)
	}
	return "[" + strings.Join(items, ",") + "]", nil
}

// outputRef is the reference to a task's output parameter as a pipeline
// output.
func (c *compiler) outputRef(out string, src *TaskOutputParameter) (string, error) {
	if src == nil {
		return "", fmt.Errorf("pipeline output %q has no producer", out)
	}
	if c.flat[src.ProducerTask].final {
		return "", unsupported("", "pipeline output from an exit task or ignore_upstream_failure task", "output %q: Tekton's Pipeline results cannot read finally tasks", out)
	}
	r, ok := c.results[src.ProducerTask][src.OutputParameterKey]
	if !ok {
		return "", fmt.Errorf("pipeline output %q: task %q has no output parameter %q", out, src.ProducerTask, src.OutputParameterKey)
	}
	return "$(tasks." + c.taskNames[src.ProducerTask] + ".results." + r + ")", nil
}

// artifactLists are the inputs given an artifact list.
func (lt launchedTask) artifactLists() map[string]bool {
	out := map[string]bool{}
	for key := range lt.artifactItems {
		out[key] = true
	}
	if lt.restArtifact {
		out[lt.rest] = true
	}
	return out
}
