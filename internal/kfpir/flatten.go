package kfpir

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Tekton has no nested pipelines, so every DAG component the SDK writes —
// a condition group (dsl.If/Elif/Else), an exit handler's group, a
// pipeline used as a component — is inlined: flatten turns the root DAG
// into its container tasks, each under a flat key ("group/task"), with
// its inputs bound to what they come from at the root (a pipeline
// parameter, a constant, a container task's output), its dependencies on
// the container tasks of the groups it ran after, and the conditions of
// the groups around it, outermost first. A group's own dependencies and
// conditions pass to every task in it, which is what KFP's driver does
// when it skips or waits for a whole group.

// maxNesting bounds DAG nesting (a component may not contain itself).
const maxNesting = 32

// flatCondition is a triggerPolicy.condition of the task (a group or a
// container task) at key id, over that task's inputs.
type flatCondition struct {
	id     string
	expr   string
	inputs map[string]*InputParameter
	types  map[string]string
}

// flatScope is one DAG being inlined.
type flatScope struct {
	path      string // flat key prefix: "" at the root, "group/" inside group
	comp      *ComponentSpec
	params    map[string]*InputParameter
	artifacts map[string]*InputArtifact
	after     []string
	conds     []*flatCondition
	depth     int
}

type flattener struct {
	spec   *PipelineSpec
	tasks  map[string]*TaskSpec
	groups map[string]bool
}

// flatten returns the container tasks of the pipeline by flat key.
func flatten(spec *PipelineSpec) (tasks map[string]*TaskSpec, groups map[string]bool, err error) {
	f := &flattener{spec: spec, tasks: map[string]*TaskSpec{}, groups: map[string]bool{}}
	root := flatScope{comp: spec.Root, params: map[string]*InputParameter{}, artifacts: map[string]*InputArtifact{}}
	if in := spec.Root.InputDefinitions; in != nil {
		for name := range in.Parameters {
			root.params[name] = &InputParameter{ComponentInputParameter: name}
		}
	}
	if err := f.dag(root); err != nil {
		return nil, nil, err
	}
	for _, key := range sortedKeys(f.tasks) {
		t := f.tasks[key]
		var deps []string
		for _, d := range t.DependentTasks {
			deps = append(deps, f.leaves(d)...)
		}
		sort.Strings(deps)
		t.DependentTasks = slices.Compact(deps)
		for _, d := range t.DependentTasks {
			if f.tasks[d].final && !t.final {
				return nil, nil, unsupported(key, "task after an exit task or ignore_upstream_failure task", "it runs after %q, which runs in Tekton's finally", d)
			}
		}
	}
	return f.tasks, f.groups, nil
}

// leaves are the container tasks at key or inside the group at key.
func (f *flattener) leaves(key string) []string {
	if _, ok := f.tasks[key]; ok {
		return []string{key}
	}
	var out []string
	for k := range f.tasks {
		if strings.HasPrefix(k, key+"/") {
			out = append(out, k)
		}
	}
	return out
}

func (f *flattener) dag(s flatScope) error {
	if s.depth > maxNesting {
		return fmt.Errorf("kfp IR: DAGs nested more than %d deep at %q (does a component contain itself?)", maxNesting, strings.TrimSuffix(s.path, "/"))
	}
	for _, name := range sortedKeys(s.comp.DAG.Tasks) {
		if err := f.task(s, name); err != nil {
			return err
		}
	}
	return nil
}

func (f *flattener) task(s flatScope, name string) error {
	t := s.comp.DAG.Tasks[name]
	key := s.path + name
	if err := refuseTaskFeatures(key, t); err != nil {
		return err
	}
	comp := f.spec.Components[t.ComponentRef.Name]
	if comp == nil {
		return fmt.Errorf("task %q: component %q is not defined", key, t.ComponentRef.Name)
	}
	params, artifacts, err := f.bind(s, key, t)
	if err != nil {
		return err
	}
	conds := slices.Clip(s.conds)
	if t.TriggerPolicy != nil && t.TriggerPolicy.Condition != "" {
		conds = append(conds, &flatCondition{id: key, expr: t.TriggerPolicy.Condition, inputs: params, types: parameterTypes(comp)})
	}
	after := slices.Clip(s.after)
	for _, dep := range t.DependentTasks {
		if _, ok := s.comp.DAG.Tasks[dep]; !ok {
			return fmt.Errorf("task %q: dependent task %q is not in the DAG", key, dep)
		}
		after = append(after, s.path+dep)
	}
	final := t.TriggerPolicy != nil && t.TriggerPolicy.Strategy == "ALL_UPSTREAM_TASKS_COMPLETED"
	if comp.DAG != nil {
		if final {
			return unsupported(key, "exit task that is a pipeline", "component %s is a DAG", t.ComponentRef.Name)
		}
		if len(comp.SinglePlatformSpecs) > 0 || len(comp.TaskConfigPassthroughs) > 0 {
			return unsupported(key, "component platform configuration", "component %s", t.ComponentRef.Name)
		}
		f.groups[key] = true
		return f.dag(flatScope{
			path: key + "/", comp: comp, params: withDefaults(comp, params), artifacts: artifacts,
			after: after, conds: conds, depth: s.depth + 1,
		})
	}
	leaf := *t
	leaf.Inputs = &TaskInputs{Parameters: params, Artifacts: artifacts}
	leaf.DependentTasks = after
	leaf.TriggerPolicy = nil
	leaf.conds = conds
	leaf.final = final
	f.tasks[key] = &leaf
	return nil
}

// bind resolves a task's inputs in scope s; an input bound to an unset
// optional input of the group is absent.
func (f *flattener) bind(s flatScope, key string, t *TaskSpec) (map[string]*InputParameter, map[string]*InputArtifact, error) {
	params := map[string]*InputParameter{}
	artifacts := map[string]*InputArtifact{}
	if t.Inputs == nil {
		return params, artifacts, nil
	}
	for _, k := range sortedKeys(t.Inputs.Parameters) {
		v, err := f.param(s, key, k, t.Inputs.Parameters[k])
		if err != nil {
			return nil, nil, err
		}
		if v != nil {
			params[k] = v
		}
	}
	for _, k := range sortedKeys(t.Inputs.Artifacts) {
		v, err := f.artifact(s, key, k, t.Inputs.Artifacts[k])
		if err != nil {
			return nil, nil, err
		}
		if v != nil {
			artifacts[k] = v
		}
	}
	return params, artifacts, nil
}

func (f *flattener) param(s flatScope, key, k string, in *InputParameter) (*InputParameter, error) {
	switch {
	case in.ParameterExpression != "":
		return in, nil // refused by name when compiled
	case in.ComponentInputParameter != "":
		if v, ok := s.params[in.ComponentInputParameter]; ok {
			return v, nil
		}
		if declares(s.comp, in.ComponentInputParameter) && s.path != "" {
			return nil, nil
		}
		if s.path == "" {
			return in, nil // an undeclared pipeline input, reported when compiled
		}
		return nil, fmt.Errorf("task %q: input parameter %q refers to input %q, which its group does not declare", key, k, in.ComponentInputParameter)
	case in.TaskOutputParameter != nil:
		return f.output(s, key, in.TaskOutputParameter.ProducerTask, in.TaskOutputParameter.OutputParameterKey)
	case len(in.TaskFinalStatus) > 0:
		var src struct {
			ProducerTask string `json:"producerTask"`
		}
		if err := json.Unmarshal(in.TaskFinalStatus, &src); err != nil || src.ProducerTask == "" {
			return nil, fmt.Errorf("task %q: input parameter %q: taskFinalStatus names no producer task", key, k)
		}
		if _, ok := s.comp.DAG.Tasks[src.ProducerTask]; !ok {
			return nil, fmt.Errorf("task %q: input parameter %q: producer task %q is not in the DAG", key, k, src.ProducerTask)
		}
		status, _ := json.Marshal(map[string]string{"producerTask": s.path + src.ProducerTask})
		return &InputParameter{TaskFinalStatus: status}, nil
	}
	return in, nil
}

// output is where output parameter k of task producer (in scope s) comes
// from: a container task's output, through the dag.outputs of groups.
func (f *flattener) output(s flatScope, consumer, producer, k string) (*InputParameter, error) {
	for depth := 0; ; depth++ {
		pt, ok := s.comp.DAG.Tasks[producer]
		if !ok || depth > maxNesting {
			return nil, fmt.Errorf("task %q: producer task %q is not in the DAG", consumer, producer)
		}
		comp := f.spec.Components[pt.ComponentRef.Name]
		if comp == nil {
			return nil, fmt.Errorf("task %q: component %q is not defined", s.path+producer, pt.ComponentRef.Name)
		}
		if comp.DAG == nil {
			return &InputParameter{TaskOutputParameter: &TaskOutputParameter{ProducerTask: s.path + producer, OutputParameterKey: k}}, nil
		}
		var out *DAGOutputParameter
		if comp.DAG.Outputs != nil {
			out = comp.DAG.Outputs.Parameters[k]
		}
		switch {
		case out == nil:
			return nil, fmt.Errorf("task %q: task %q has no output parameter %q", consumer, s.path+producer, k)
		case len(out.ValueFromOneof) > 0:
			return nil, unsupported(consumer, "output from dsl.OneOf", "output %q of %q", k, s.path+producer)
		case out.ValueFromParameter == nil:
			return nil, fmt.Errorf("task %q: output %q of %q has no source", consumer, k, s.path+producer)
		}
		s = flatScope{path: s.path + producer + "/", comp: comp}
		producer, k = out.ValueFromParameter.ProducerSubtask, out.ValueFromParameter.OutputParameterKey
	}
}

func (f *flattener) artifact(s flatScope, key, k string, in *InputArtifact) (*InputArtifact, error) {
	switch {
	case in.ComponentInputArtifact != "":
		if v, ok := s.artifacts[in.ComponentInputArtifact]; ok {
			return v, nil
		}
		if s.path != "" && declaresArtifact(s.comp, in.ComponentInputArtifact) {
			return nil, nil
		}
		return in, nil // a pipeline input artifact, refused by name when compiled
	case in.TaskOutputArtifact == nil:
		return in, nil
	}
	producer, ak := in.TaskOutputArtifact.ProducerTask, in.TaskOutputArtifact.OutputArtifactKey
	for depth := 0; ; depth++ {
		pt, ok := s.comp.DAG.Tasks[producer]
		if !ok || depth > maxNesting {
			return nil, fmt.Errorf("task %q: input artifact %q: producer task %q is not in the DAG", key, k, producer)
		}
		comp := f.spec.Components[pt.ComponentRef.Name]
		if comp == nil {
			return nil, fmt.Errorf("task %q: component %q is not defined", s.path+producer, pt.ComponentRef.Name)
		}
		if comp.DAG == nil {
			return &InputArtifact{TaskOutputArtifact: &TaskOutputArtifact{ProducerTask: s.path + producer, OutputArtifactKey: ak}}, nil
		}
		var raw json.RawMessage
		if comp.DAG.Outputs != nil {
			raw = comp.DAG.Outputs.Artifacts[ak]
		}
		var sel struct {
			ArtifactSelectors []struct {
				ProducerSubtask   string `json:"producerSubtask"`
				OutputArtifactKey string `json:"outputArtifactKey"`
			} `json:"artifactSelectors"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &sel) != nil || len(sel.ArtifactSelectors) == 0 {
			return nil, fmt.Errorf("task %q: input artifact %q: task %q has no output artifact %q", key, k, s.path+producer, ak)
		}
		if len(sel.ArtifactSelectors) > 1 {
			return nil, unsupported(key, "output from dsl.OneOf", "artifact %q of %q", ak, s.path+producer)
		}
		s = flatScope{path: s.path + producer + "/", comp: comp}
		producer, ak = sel.ArtifactSelectors[0].ProducerSubtask, sel.ArtifactSelectors[0].OutputArtifactKey
	}
}

// withDefaults adds a group's declared defaults for its unbound inputs.
func withDefaults(comp *ComponentSpec, params map[string]*InputParameter) map[string]*InputParameter {
	out := make(map[string]*InputParameter, len(params))
	for k, v := range params {
		out[k] = v
	}
	if comp.InputDefinitions == nil {
		return out
	}
	for k, def := range comp.InputDefinitions.Parameters {
		if _, ok := out[k]; !ok && len(def.DefaultValue) > 0 {
			out[k] = &InputParameter{RuntimeValue: &RuntimeValue{Constant: def.DefaultValue}}
		}
	}
	return out
}

func declares(comp *ComponentSpec, param string) bool {
	if comp.InputDefinitions == nil {
		return false
	}
	_, ok := comp.InputDefinitions.Parameters[param]
	return ok
}

func declaresArtifact(comp *ComponentSpec, artifact string) bool {
	if comp.InputDefinitions == nil {
		return false
	}
	_, ok := comp.InputDefinitions.Artifacts[artifact]
	return ok
}

func parameterTypes(comp *ComponentSpec) map[string]string {
	out := map[string]string{}
	if comp.InputDefinitions != nil {
		for k, def := range comp.InputDefinitions.Parameters {
			out[k] = def.ParameterType
		}
	}
	return out
}

// flatTaskNames gives each flat key (container tasks and condition gates)
// its Tekton name: the task's own KFP name where no other key shares it,
// else the whole key; sanitised as Tekton requires.
func flatTaskNames(keys []string) (map[string]string, error) {
	last := func(k string) string { return k[strings.LastIndex(k, "/")+1:] }
	count := map[string]int{}
	for _, k := range keys {
		count[last(k)]++
	}
	short := map[string]string{}
	owner := map[string]string{}
	for _, k := range keys {
		s := last(k)
		if count[s] > 1 {
			s = strings.ReplaceAll(k, "/", "-")
		}
		if prev, taken := owner[s]; taken && prev != k {
			s = k // still shared: the key itself, sanitised with its hash
		}
		owner[s] = k
		short[k] = s
	}
	names, err := taskNames.assign(sortedValues(short))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for k, s := range short {
		out[k] = names[s]
	}
	return out, nil
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
