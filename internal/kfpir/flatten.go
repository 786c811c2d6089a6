package kfpir

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
)

// Tekton has no nested pipelines, so every DAG component the SDK writes —
// a condition group (dsl.If/Elif/Else), an exit handler's group, a loop
// (dsl.ParallelFor), a pipeline used as a component — is inlined: flatten
// turns the root DAG into its container tasks, each under a flat key
// ("group/task"; "loop/2/task" for an unrolled loop's third iteration),
// with its inputs bound to what they come from at the root (a pipeline
// parameter, a constant, a container task's output, a loop's item or the
// collected outputs of a loop), its dependencies on the container tasks
// of the groups it runs after, and the conditions of the groups around
// it, outermost first. A group's own dependencies and conditions pass to
// every task in it, which is what KFP's driver does when it skips or
// waits for a whole group.

// maxNesting bounds DAG nesting (a component may not contain itself).
const maxNesting = 32

// maxUnrolled bounds the iterations of a loop over a list known when
// compiling, each a copy of the loop's tasks in the Pipeline.
const maxUnrolled = 200

// flatCondition is a triggerPolicy.condition of the task (a group or a
// container task) at key id, over that task's inputs.
type flatCondition struct {
	id     string
	expr   string
	inputs map[string]*InputParameter
	types  map[string]string
}

// flatLoop is a dsl.ParallelFor over a list known only at run time: its
// tasks fan out over the list's items (Tekton's Matrix).
type flatLoop struct {
	key   string
	items *InputParameter // the list, resolved
	// artifacts: a loop over an artifact list, the output artifact of
	// the fanned-out task it comes from (its items, not items).
	artifacts *TaskOutputArtifact
	conds     []*flatCondition
	// outer: a loop over a field of the item of the run-time loop outer
	// (items is that item, with the field's selector): its tasks run once
	// per (outer item, inner item) pair.
	outer *flatLoop
	// selectors are the item selectors its tasks use (loops.go).
	selectors []string
}

// loopGroup is what a loop group became: n unrolled iterations (a list
// known when compiling), or a run-time loop.
type loopGroup struct {
	n       int
	runtime *flatLoop
}

// flatScope is one DAG being inlined.
type flatScope struct {
	path      string // flat key prefix: "" at the root, "group/" inside group
	comp      *ComponentSpec
	params    map[string]*InputParameter
	artifacts map[string]*InputArtifact
	after     []string
	conds     []*flatCondition
	loop      *flatLoop
	depth     int
	// final: the scope is an exit task that is a pipeline, whose tasks
	// all run in Tekton's finally; exit the key of that pipeline.
	final bool
	exit  string
}

type flattener struct {
	spec   *PipelineSpec
	tasks  map[string]*TaskSpec
	groups map[string]*ComponentSpec
	loops  map[string]*loopGroup
	// groupConds are the conditions guarding each group; oneOfs the
	// dsl.OneOf outputs by selector key; published the outputs of each
	// task that a dsl.OneOf takes (oneof.go).
	groupConds map[string][]*flatCondition
	oneOfs     map[string]*oneOfOutput
	published  map[string][]string
}

// flatten inlines the pipeline's groups; its tasks are the container
// tasks by flat key.
func flatten(spec *PipelineSpec) (*flattener, error) {
	f := &flattener{spec: spec, tasks: map[string]*TaskSpec{}, groups: map[string]*ComponentSpec{}, loops: map[string]*loopGroup{},
		groupConds: map[string][]*flatCondition{}, oneOfs: map[string]*oneOfOutput{}}
	root := flatScope{comp: spec.Root, params: map[string]*InputParameter{}, artifacts: map[string]*InputArtifact{}}
	if in := spec.Root.InputDefinitions; in != nil {
		for name := range in.Parameters {
			root.params[name] = &InputParameter{ComponentInputParameter: name}
		}
	}
	if err := f.dag(root); err != nil {
		return nil, err
	}
	if err := f.resolveAll(); err != nil {
		return nil, err
	}
	if err := f.rootOneOfs(); err != nil {
		return nil, err
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
				return nil, unsupported(key, "task after an exit task or ignore_upstream_failure task", "it runs after %q, which runs in Tekton's finally", d)
			}
		}
	}
	f.exitPipelines()
	return f, nil
}

// An exit task that is a pipeline (or a pipeline task that ignores
// upstream failures) runs in Tekton's finally, where tasks run in
// parallel once the others are done and take no runAfter and no results
// of other finally tasks (Tekton v1.15.1's validation: "no runAfter
// allowed under spec.finally", "final task has task result reference
// from a final task"); a pipeline as a PipelineTask (pipelineSpec) needs
// enable-api-fields: alpha. So its tasks, when independent, are finally
// tasks each; when some depend on others (runAfter, data, conditions),
// they become the steps of one finally task, in dependency order
// (exitpipeline.go). A loop inside is refused by name (task).

// exitPipelines marks the tasks of each exit pipeline whose tasks depend
// on each other with the pipeline's key: they are compiled as one task.
func (f *flattener) exitPipelines() {
	byExit := map[string][]string{}
	for key, t := range f.tasks {
		if t.exitPipeline != "" {
			byExit[t.exitPipeline] = append(byExit[t.exitPipeline], key)
		}
	}
	for exit, keys := range byExit {
		if !f.exitDependent(exit, keys) {
			for _, k := range keys {
				f.tasks[k].exitPipeline = ""
			}
		}
	}
}

// exitDependent says a task of the exit pipeline at exit runs after
// another of its tasks, takes an output of one, or has a condition of its
// own or of a group inside the exit pipeline.
func (f *flattener) exitDependent(exit string, keys []string) bool {
	inside := func(k string) bool { return strings.HasPrefix(k, exit+"/") }
	for _, k := range keys {
		t := f.tasks[k]
		if slices.ContainsFunc(t.DependentTasks, inside) || slices.ContainsFunc(t.conds, func(c *flatCondition) bool { return inside(c.id) }) {
			return true
		}
		for _, p := range t.Inputs.Parameters {
			if p.TaskOutputParameter != nil && inside(p.TaskOutputParameter.ProducerTask) {
				return true
			}
		}
		for _, a := range t.Inputs.Artifacts {
			if a.TaskOutputArtifact != nil && inside(a.TaskOutputArtifact.ProducerTask) {
				return true
			}
		}
	}
	return false
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
	for _, name := range dagOrder(s.comp.DAG) {
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
	final := s.final || (t.TriggerPolicy != nil && t.TriggerPolicy.Strategy == "ALL_UPSTREAM_TASKS_COMPLETED")
	isLoop := len(t.ParameterIter) > 0 || len(t.ArtifactIter) > 0 || len(t.IteratorPolicy) > 0
	if comp.DAG == nil {
		if isLoop {
			return unsupported(key, "loop (dsl.ParallelFor) over a container task", "an iterator on a task that is not a DAG")
		}
		leaf := *t
		leaf.Inputs = &TaskInputs{Parameters: params, Artifacts: artifacts}
		leaf.DependentTasks = after
		leaf.TriggerPolicy = nil
		leaf.conds = conds
		leaf.final = final
		leaf.loop = s.loop
		leaf.exitPipeline = s.exit
		if leaf.platformNames, err = f.bindPlatformNames(s, key, comp.ExecutorLabel); err != nil {
			return err
		}
		f.tasks[key] = &leaf
		return nil
	}
	if final && isLoop {
		if s.final {
			return unsupported(key, "loop (dsl.ParallelFor) inside an exit task that is a pipeline", "component %s: its tasks run as the steps of one finally task", t.ComponentRef.Name)
		}
		return unsupported(key, "exit task that is a loop", "component %s", t.ComponentRef.Name)
	}
	if len(comp.SinglePlatformSpecs) > 0 || len(comp.TaskConfigPassthroughs) > 0 {
		return unsupported(key, "component platform configuration", "component %s", t.ComponentRef.Name)
	}
	f.groups[key] = comp
	f.groupConds[key] = conds
	inner := flatScope{
		path: key + "/", comp: comp, params: withDefaults(comp, params), artifacts: artifacts,
		after: after, conds: conds, loop: s.loop, depth: s.depth + 1, final: final, exit: s.exit,
	}
	if final && inner.exit == "" {
		inner.exit = key
	}
	if isLoop {
		return f.loop(inner, key, t)
	}
	return f.dag(inner)
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
		return f.selected(s, key, k, in)
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
		producer := in.TaskOutputParameter.ProducerTask
		if _, ok := s.comp.DAG.Tasks[producer]; !ok {
			return nil, fmt.Errorf("task %q: input parameter %q: producer task %q is not in the DAG", key, k, producer)
		}
		// Resolved once every group is known (resolveAll).
		return &InputParameter{TaskOutputParameter: &TaskOutputParameter{ProducerTask: s.path + producer, OutputParameterKey: in.TaskOutputParameter.OutputParameterKey}}, nil
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

// selected is an input with a parameterExpressionSelector (the SDK writes
// one for a field of a loop item: parseJson(string_value)["a"]): applied
// now to a value known when compiling, by the fan-out of a run-time loop
// to its items.
func (f *flattener) selected(s flatScope, key, k string, in *InputParameter) (*InputParameter, error) {
	sel := in.ParameterExpression
	if err := kfpcel.CheckSelector(sel); err != nil {
		return nil, fmt.Errorf("task %q: input parameter %q: %w", key, k, err)
	}
	base := *in
	base.ParameterExpression = ""
	v, err := f.param(s, key, k, &base)
	switch {
	case err != nil:
		return nil, err
	case v == nil:
		return nil, nil
	case v.RuntimeValue != nil && len(v.RuntimeValue.Constant) > 0:
		value := &structpb.Value{}
		if err := value.UnmarshalJSON(v.RuntimeValue.Constant); err != nil {
			return nil, fmt.Errorf("task %q: input parameter %q: %w", key, k, err)
		}
		out, err := kfpcel.Select(sel, value)
		if err != nil {
			return nil, fmt.Errorf("task %q: input parameter %q: %w", key, k, err)
		}
		raw, err := out.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return &InputParameter{RuntimeValue: &RuntimeValue{Constant: raw}}, nil
	case v.loopItem != nil && v.selector == "":
		return &InputParameter{loopItem: v.loopItem, selector: sel}, nil
	}
	return nil, unsupported(key, "parameter expression selector on a value known only at run time", "input parameter %q (%s) is not a loop's item", k, sel)
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
	producer := in.TaskOutputArtifact.ProducerTask
	if _, ok := s.comp.DAG.Tasks[producer]; !ok {
		return nil, fmt.Errorf("task %q: input artifact %q: producer task %q is not in the DAG", key, k, producer)
	}
	return &InputArtifact{TaskOutputArtifact: &TaskOutputArtifact{ProducerTask: s.path + producer, OutputArtifactKey: in.TaskOutputArtifact.OutputArtifactKey}}, nil
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
