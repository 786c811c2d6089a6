package kfpir

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Inlining loops (dsl.ParallelFor): over parameters (parameterIterator)
// and over artifacts (artifactIterator). A loop over a list known when
// compiling is unrolled; one over a list known only at run time becomes a
// flatLoop, whose tasks fan out (loops.go). An artifact list is known when
// compiling when it is collected from an unrolled loop (one artifact per
// iteration, its producer known); one collected from a run-time loop is
// the gathered {uri, metadata} results of the fanned-out producer.

// iterator is a loop's parameterIterator or artifactIterator.
type iterator struct {
	ItemInput string `json:"itemInput"`
	Items     struct {
		Raw            string `json:"raw"`
		InputParameter string `json:"inputParameter"`
		InputArtifact  string `json:"inputArtifact"`
	} `json:"items"`
}

// dagOrder is the order the tasks of a DAG are inlined in: producers
// before consumers (so a loop over an artifact list finds the list's
// producer inlined), by name otherwise; a cycle, which Tekton refuses
// later, keeps the name order.
func dagOrder(dag *DAGSpec) []string {
	names := sortedKeys(dag.Tasks)
	deps := map[string][]string{}
	for _, name := range names {
		t := dag.Tasks[name]
		deps[name] = append(deps[name], t.DependentTasks...)
		if t.Inputs == nil {
			continue
		}
		for _, p := range t.Inputs.Parameters {
			if p.TaskOutputParameter != nil {
				deps[name] = append(deps[name], p.TaskOutputParameter.ProducerTask)
			}
		}
		for _, a := range t.Inputs.Artifacts {
			if a.TaskOutputArtifact != nil {
				deps[name] = append(deps[name], a.TaskOutputArtifact.ProducerTask)
			}
		}
	}
	done := map[string]bool{}
	var out []string
	for len(out) < len(names) {
		progress := false
		for _, name := range names {
			if done[name] {
				continue
			}
			ready := true
			for _, d := range deps[name] {
				_, inDAG := dag.Tasks[d]
				ready = ready && (done[d] || !inDAG || d == name)
			}
			if ready {
				done[name], progress = true, true
				out = append(out, name)
			}
		}
		if !progress {
			for _, name := range names {
				if !done[name] {
					done[name] = true
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// loop inlines a dsl.ParallelFor group (scope s is its inside): unrolled
// when its list is known when compiling (a raw list, a constant, artifacts
// collected from an unrolled loop), iteration i after iteration
// i-parallelismLimit; otherwise a run-time loop.
func (f *flattener) loop(s flatScope, key string, t *TaskSpec) error {
	var it iterator
	var policy struct {
		ParallelismLimit int `json:"parallelismLimit"`
	}
	raw, what := t.ParameterIter, "parameterIterator"
	if len(t.ArtifactIter) > 0 {
		raw, what = t.ArtifactIter, "artifactIterator"
	}
	if err := json.Unmarshal(raw, &it); err != nil || it.ItemInput == "" {
		return fmt.Errorf("task %q: %s without itemInput", key, what)
	}
	if len(t.IteratorPolicy) > 0 {
		if err := json.Unmarshal(t.IteratorPolicy, &policy); err != nil {
			return fmt.Errorf("task %q: iteratorPolicy: %w", key, err)
		}
	}
	if len(t.ArtifactIter) > 0 {
		return f.artifactLoop(s, key, it, policy.ParallelismLimit)
	}
	var list *InputParameter
	switch {
	case it.Items.Raw != "":
		list = &InputParameter{RuntimeValue: &RuntimeValue{Constant: json.RawMessage(strconv.Quote(it.Items.Raw))}}
	case it.Items.InputParameter != "":
		if list = s.params[it.Items.InputParameter]; list == nil {
			return fmt.Errorf("task %q: the loop's list %q is not bound", key, it.Items.InputParameter)
		}
	default:
		return fmt.Errorf("task %q: parameterIterator has no items", key)
	}
	if list.RuntimeValue != nil {
		items, err := constantList(list.RuntimeValue.Constant)
		if err != nil {
			return fmt.Errorf("task %q: the loop's items: %w", key, err)
		}
		return f.unroll(s, key, len(items), policy.ParallelismLimit, func(iter *flatScope, i int) {
			iter.params[it.ItemInput] = &InputParameter{RuntimeValue: &RuntimeValue{Constant: items[i]}}
		})
	}
	loop := &flatLoop{key: key, items: list, conds: s.conds}
	if s.loop != nil && list.loopItem == s.loop && s.loop.outer == nil && s.loop.artifacts == nil && policy.ParallelismLimit == 0 {
		loop.outer = s.loop // over the outer loop's item: over the pairs
	} else if err := f.runtimeLoop(s, key, policy.ParallelismLimit); err != nil {
		return err
	}
	f.loops[key] = &loopGroup{runtime: loop}
	s.loop = loop
	s.params = withDefaults(s.comp, s.params)
	s.params[it.ItemInput] = &InputParameter{loopItem: loop}
	return f.dag(s)
}

// unroll inlines n iterations of the loop at key, bind giving each its item.
func (f *flattener) unroll(s flatScope, key string, n, limit int, bind func(iter *flatScope, i int)) error {
	if n > maxUnrolled {
		return unsupported(key, "loop over more than 200 items known when compiling", "%d items: each is a copy of the loop's tasks", n)
	}
	f.loops[key] = &loopGroup{n: n}
	for i := 0; i < n; i++ {
		iter := s
		iter.path = key + "/" + strconv.Itoa(i) + "/"
		iter.params = withDefaults(s.comp, s.params)
		iter.artifacts = maps.Clone(s.artifacts)
		bind(&iter, i)
		if limit > 0 && i >= limit {
			iter.after = append(slices.Clip(s.after), key+"/"+strconv.Itoa(i-limit))
		}
		if err := f.dag(iter); err != nil {
			return err
		}
	}
	return nil
}

// runtimeLoop refuses what a loop over a run-time list cannot be.
func (f *flattener) runtimeLoop(s flatScope, key string, limit int) error {
	if limit > 0 {
		return unsupported(key, "parallelism limit on a loop over a run-time list", "parallelismLimit %d: Tekton's Matrix starts every iteration at once", limit)
	}
	if s.loop != nil {
		return unsupported(key, "loop over a run-time list inside another", "inside %q, over a list other than a field of its item (a cross product, or a third level)", s.loop.key)
	}
	return nil
}

// artifactLoop inlines a loop over an artifact list: unrolled over the
// artifacts collected from an unrolled loop, each iteration given one; a
// run-time loop over those of a fanned-out task, each item one artifact's
// {uri, metadata}.
func (f *flattener) artifactLoop(s flatScope, key string, it iterator, limit int) error {
	name := it.Items.InputArtifact
	list := s.artifacts[name]
	if list == nil {
		return fmt.Errorf("task %q: the loop's artifact list %q is not bound", key, name)
	}
	if src := list.TaskOutputArtifact; src != nil {
		var err error
		if list, err = f.resolveArtifact(key, name, src.ProducerTask, src.OutputArtifactKey); err != nil {
			return err
		}
	}
	switch {
	case list.collected != nil:
		return f.unroll(s, key, len(list.collected), limit, func(iter *flatScope, i int) {
			iter.artifacts[it.ItemInput] = &InputArtifact{TaskOutputArtifact: list.collected[i]}
		})
	case list.collectedFrom != nil:
		if err := f.runtimeLoop(s, key, limit); err != nil {
			return err
		}
		loop := &flatLoop{key: key, artifacts: list.collectedFrom, conds: s.conds}
		f.loops[key] = &loopGroup{runtime: loop}
		s.loop = loop
		s.params = withDefaults(s.comp, s.params)
		s.artifacts = maps.Clone(s.artifacts)
		s.artifacts[it.ItemInput] = &InputArtifact{loopItem: loop}
		return f.dag(s)
	case list.ComponentInputArtifact != "":
		return unsupported(key, "loop (dsl.ParallelFor) over a pipeline input artifact list", "input %q", list.ComponentInputArtifact)
	}
	return unsupported(key, "loop (dsl.ParallelFor) over a single artifact", "input artifact %q is not a list", name)
}

// constantList is a loop's items from a constant: a JSON list, or text
// holding one (the SDK writes a raw list as text).
func constantList(raw json.RawMessage) ([]json.RawMessage, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s is not a JSON list", raw)
	}
	return items, nil
}
