package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Resolution: once every group is inlined, references to a group's
// outputs become references to the container tasks (or the loop
// iterations) producing them.

// resolveAll turns every reference to a group's output (inputs, the
// inputs of conditions, the lists of run-time loops) into where the value
// comes from, now that every group is known.
func (f *flattener) resolveAll() error {
	params := func(task string, m map[string]*InputParameter) error {
		for _, k := range sortedKeys(m) {
			r, err := f.resolveParam(task, m[k])
			if err != nil {
				return err
			}
			m[k] = r
		}
		return nil
	}
	for _, key := range sortedKeys(f.tasks) {
		t := f.tasks[key]
		if err := params(key, t.Inputs.Parameters); err != nil {
			return err
		}
		if err := params(key, t.platformNames); err != nil {
			return err
		}
		for _, cond := range t.conds {
			if err := params(cond.id, cond.inputs); err != nil {
				return err
			}
		}
		for _, k := range sortedKeys(t.Inputs.Artifacts) {
			a := t.Inputs.Artifacts[k]
			if a.TaskOutputArtifact == nil {
				continue
			}
			r, err := f.resolveArtifact(key, k, a.TaskOutputArtifact.ProducerTask, a.TaskOutputArtifact.OutputArtifactKey)
			if err != nil {
				return err
			}
			t.Inputs.Artifacts[k] = r
		}
		for loop := t.loop; loop != nil; loop = loop.outer {
			var err error
			if loop.items, err = f.resolveParam(loop.key, loop.items); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *flattener) resolveParam(consumer string, in *InputParameter) (*InputParameter, error) {
	if in == nil || in.TaskOutputParameter == nil {
		return in, nil
	}
	return f.resolveOutput(consumer, in.TaskOutputParameter.ProducerTask, in.TaskOutputParameter.OutputParameterKey)
}

// resolveOutput is where output parameter k of the task or group at key
// comes from: a container task's output, through the dag.outputs of
// groups; a loop's output is the list of its iterations' values
// (dsl.Collected).
func (f *flattener) resolveOutput(consumer, key, k string) (*InputParameter, error) {
	for depth := 0; depth <= maxNesting; depth++ {
		if _, leaf := f.tasks[key]; leaf {
			return &InputParameter{TaskOutputParameter: &TaskOutputParameter{ProducerTask: key, OutputParameterKey: k}}, nil
		}
		comp := f.groups[key]
		if comp == nil {
			return nil, fmt.Errorf("task %q: producer task %q is not in the DAG", consumer, key)
		}
		var out *DAGOutputParameter
		if comp.DAG.Outputs != nil {
			out = comp.DAG.Outputs.Parameters[k]
		}
		switch {
		case out == nil:
			return nil, fmt.Errorf("task %q: task %q has no output parameter %q", consumer, key, k)
		case len(out.ValueFromOneof) > 0:
			return f.oneOf(consumer, key, k, out.ValueFromOneof)
		case out.ValueFromParameter == nil:
			return nil, fmt.Errorf("task %q: output %q of %q has no source", consumer, k, key)
		}
		sub, subKey := out.ValueFromParameter.ProducerSubtask, out.ValueFromParameter.OutputParameterKey
		if loop := f.loops[key]; loop != nil {
			return f.collect(consumer, key, loop, sub, subKey)
		}
		key, k = key+"/"+sub, subKey
	}
	return nil, fmt.Errorf("task %q: outputs nested more than %d deep", consumer, maxNesting)
}

// collect is the output of a loop: each iteration's value (dsl.Collected).
// Over nested unrolled loops it is a list of lists, as in KFP.
func (f *flattener) collect(consumer, key string, loop *loopGroup, sub, k string) (*InputParameter, error) {
	if loop.runtime != nil {
		in, err := f.resolveOutput(consumer, key+"/"+sub, k)
		if err != nil {
			return nil, err
		}
		if in.TaskOutputParameter == nil {
			return nil, unsupported(consumer, "collected output of nested loops", "output %q of %q: a loop inside a loop over a run-time list", k, key)
		}
		return &InputParameter{collectedFrom: in.TaskOutputParameter}, nil
	}
	out := &InputParameter{collected: []*InputParameter{}}
	for i := 0; i < loop.n; i++ {
		in, err := f.resolveOutput(consumer, key+"/"+strconv.Itoa(i)+"/"+sub, k)
		if err != nil {
			return nil, err
		}
		if in.collectedFrom != nil {
			return nil, unsupported(consumer, "collected output of nested loops", "output %q of %q: a loop over a run-time list inside an unrolled loop", k, key)
		}
		out.collected = append(out.collected, in)
	}
	return out, nil
}

// resolveArtifact follows output artifact ak of the task or group at key
// to the container task producing it.
func (f *flattener) resolveArtifact(consumer, k, key, ak string) (*InputArtifact, error) {
	for depth := 0; depth <= maxNesting; depth++ {
		if _, leaf := f.tasks[key]; leaf {
			return &InputArtifact{TaskOutputArtifact: &TaskOutputArtifact{ProducerTask: key, OutputArtifactKey: ak}}, nil
		}
		comp := f.groups[key]
		if comp == nil {
			return nil, fmt.Errorf("task %q: input artifact %q: producer task %q is not in the DAG", consumer, k, key)
		}
		var raw json.RawMessage
		if comp.DAG.Outputs != nil {
			raw = comp.DAG.Outputs.Artifacts[ak]
		}
		var sel struct {
			ArtifactSelectors []artifactSelector `json:"artifactSelectors"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &sel) != nil || len(sel.ArtifactSelectors) == 0 {
			return nil, fmt.Errorf("task %q: input artifact %q: task %q has no output artifact %q", consumer, k, key, ak)
		}
		if len(sel.ArtifactSelectors) > 1 {
			if f.loops[key] != nil {
				return nil, fmt.Errorf("task %q: input artifact %q: loop %q has more than one selector for output artifact %q", consumer, k, key, ak)
			}
			return f.oneOfArtifact(consumer, k, key, ak, sel.ArtifactSelectors)
		}
		sub, subKey := sel.ArtifactSelectors[0].ProducerSubtask, sel.ArtifactSelectors[0].OutputArtifactKey
		if loop := f.loops[key]; loop != nil {
			return f.collectArtifacts(consumer, k, key, loop, sub, subKey)
		}
		key, ak = key+"/"+sub, subKey
	}
	return nil, fmt.Errorf("task %q: artifacts nested more than %d deep", consumer, maxNesting)
}

// collectArtifacts is an output artifact of a loop: the list of its
// iterations' artifacts (dsl.Collected). KFP's artifact lists are flat:
// over nested loops, every iteration's artifact in order.
func (f *flattener) collectArtifacts(consumer, k, key string, loop *loopGroup, sub, ak string) (*InputArtifact, error) {
	if loop.runtime != nil {
		in, err := f.resolveArtifact(consumer, k, key+"/"+sub, ak)
		if err != nil {
			return nil, err
		}
		if in.TaskOutputArtifact == nil {
			return nil, unsupported(consumer, "artifact list of nested loops", "input artifact %q from %q: a loop inside a loop over a run-time list", k, key)
		}
		return &InputArtifact{collectedFrom: in.TaskOutputArtifact}, nil
	}
	out := &InputArtifact{collected: []*TaskOutputArtifact{}}
	for i := 0; i < loop.n; i++ {
		in, err := f.resolveArtifact(consumer, k, key+"/"+strconv.Itoa(i)+"/"+sub, ak)
		switch {
		case err != nil:
			return nil, err
		case in.collectedFrom != nil:
			return nil, unsupported(consumer, "artifact list of nested loops", "input artifact %q from %q: a loop over a run-time list inside an unrolled loop", k, key)
		case in.TaskOutputArtifact != nil:
			out.collected = append(out.collected, in.TaskOutputArtifact)
		default:
			out.collected = append(out.collected, in.collected...)
		}
	}
	return out, nil
}
