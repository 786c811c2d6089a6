package kfpir

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
)

// task compiles the container task at flat key name, with the condition
// tasks it is the first to need.
func (c *compiler) task(name string, t *TaskSpec) (tektonv1.PipelineTask, []tektonv1.PipelineTask, error) {
	pt, err := c.containerTask(name, t)
	if err != nil {
		return pt, nil, err
	}
	var gates []tektonv1.PipelineTask
	if t.loop != nil && !c.gates[itemsKey(t.loop)] {
		if gates, err = c.itemsTask(t.loop); err != nil {
			return pt, nil, err
		}
	}
	when, condGates, err := c.whens(name, t.conds)
	if err != nil {
		return pt, nil, err
	}
	gates = append(gates, condGates...)
	pt.When = append(pt.When, when...)
	if t.final {
		pt.RunAfter = nil // Tekton runs finally after every task
	}
	return pt, gates, nil
}

func (c *compiler) containerTask(name string, t *TaskSpec) (tektonv1.PipelineTask, error) {
	b, err := c.newTaskBuild(name, t)
	if err != nil {
		return tektonv1.PipelineTask{}, err
	}
	for _, phase := range []func() error{b.bindParams, b.taskParams, b.outputs, b.inputArtifacts, b.mainStep, b.publish} {
		if err := phase(); err != nil {
			return b.pt, err
		}
	}
	b.finish()
	return b.pt, nil
}

// taskBuild is one container task being compiled, phase by phase.
type taskBuild struct {
	c         *compiler
	name      string
	t         *TaskSpec
	comp      *ComponentSpec
	exec      *ContainerSpec
	resources corev1.ResourceRequirements // the main step's, computed once
	in, out   *IODefinitions
	inputs    *TaskInputs
	pt        tektonv1.PipelineTask
	ts        tektonv1.TaskSpec
	after     map[string]bool
	bound     map[string]string          // input parameter values, PipelineTask level
	special   map[string]*InputParameter // a loop's item, collected outputs (loops.go)
	fstrings  map[string]bool
	local     map[string]string // input parameter → TaskSpec param
	caches    bool
	launch    bool
	stub      string // CreatePVCImage or DeletePVCImage (pvc.go)
	launched  launchedTask
	ph        placeholders
}

func (c *compiler) newTaskBuild(name string, t *TaskSpec) (*taskBuild, error) {
	comp, ok := c.spec.Components[t.ComponentRef.Name]
	if !ok || comp == nil {
		return nil, fmt.Errorf("task %q: component %q is not defined", name, t.ComponentRef.Name)
	}
	exec, err := c.executor(name, t.ComponentRef.Name, comp)
	if err != nil {
		return nil, err
	}
	// Resources are mapped before the inputs the SDK binds for them
	// (which the component does not declare) are checked.
	resources, fromParams, err := c.computeResources(name, t.Inputs, exec.Resources)
	if err != nil {
		return nil, err
	}
	c.resourceParams = append(c.resourceParams, fromParams...)
	b := &taskBuild{c: c, name: name, t: t, comp: comp, exec: exec, resources: resources, in: comp.InputDefinitions, out: comp.OutputDefinitions,
		inputs: t.Inputs, after: map[string]bool{}, bound: map[string]string{}, special: map[string]*InputParameter{}, stub: pvcStub(exec)}
	if b.in == nil {
		b.in = &IODefinitions{}
	}
	if b.out == nil {
		b.out = &IODefinitions{}
	}
	if b.inputs == nil {
		b.inputs = &TaskInputs{}
	}
	for _, key := range sortedKeys(b.out.Artifacts) {
		if b.out.Artifacts[key].IsArtifactList {
			return nil, unsupported(name, "output artifact list (List[Artifact] output)", "artifact %q", key)
		}
	}
	for _, dep := range t.DependentTasks {
		if _, ok := c.taskNames[dep]; !ok {
			return nil, fmt.Errorf("task %q: dependent task %q is not in the DAG", name, dep)
		}
		b.after[dep] = true
	}
	return b, nil
}

// bindParams computes the values of the task's input parameters.
func (b *taskBuild) bindParams() error {
	for _, key := range sortedKeys(b.inputs.Parameters) {
		p := b.inputs.Parameters[key]
		if p.loopItem != nil || p.collected != nil || p.collectedFrom != nil {
			b.special[key] = p
			continue
		}
		typ := ""
		if def, ok := b.in.Parameters[key]; ok {
			typ = def.ParameterType
		}
		if status := len(p.TaskFinalStatus) > 0; status && !b.t.final {
			return unsupported(b.name, "task final status in a task that is not an exit task", "input parameter %q", key)
		} else if !status && typ == "TASK_FINAL_STATUS" {
			return unsupported(b.name, "task final status input without a taskFinalStatus source", "input parameter %q", key)
		}
		v, producer, err := b.c.inputValue(b.name, key, p, typ)
		if err != nil {
			return err
		}
		b.bound[key] = v
		if producer != "" {
			b.after[producer] = true
		}
	}
	var err error
	b.fstrings, err = resolveFStrings(b.name, b.inputs.Parameters, b.bound)
	return err
}

// taskParams declares the TaskSpec's params (the component's inputs) and
// passes them their values.
func (b *taskBuild) taskParams() error {
	c, name := b.c, b.name
	var err error
	if b.local, err = paramNames.assign(sortedKeys(b.in.Parameters)); err != nil {
		return fmt.Errorf("task %q: %w", name, err)
	}
	if c.store == nil {
		b.ts = tektonv1.TaskSpec{Workspaces: []tektonv1.WorkspaceDeclaration{{Name: ArtifactsWorkspace, MountPath: c.rootPath}}}
	}
	// A step of an exit pipeline (exitpipeline.go) runs under the launcher,
	// which writes its success marker, and every time.
	b.caches = c.caching() && b.t.CachingOptions != nil && b.t.CachingOptions.EnableCache && b.t.exitPipeline == ""
	b.launch = b.t.exitPipeline != "" || needsLauncher(b.exec) || takesFinalStatus(b.in) || collects(b.special) || b.caches || c.takesRuntimeURI(b.inputs) ||
		collectsArtifacts(b.inputs) || len(c.reportedArtifacts()[name]) > 0 || takesOneOfArtifact(b.inputs) ||
		// the launcher makes the outputs readable for the store step
		c.store != nil && len(b.out.Artifacts) > 0
	if b.stub != "" {
		// kfp-task pvc takes the values as they are; creating or
		// deleting a claim is never a cache hit.
		b.launch, b.caches = false, false
	}
	b.launched = launchedTask{name: kfpTaskName(name), tektonName: c.taskNames[name], params: map[string]string{},
		inURIs: map[string]string{}, inMeta: map[string]string{}, inMetaParams: map[string]map[string]string{}, results: c.results[name], items: map[string][]string{}, itemTypes: map[string]string{},
		itemShapes: map[string]string{}, artifactItems: map[string][]string{}, artifactResults: map[string]string{}, oneOfArtifacts: map[string]string{},
		artifactJSON: map[string]string{}}
	if b.t.loop != nil {
		b.launched.tektonName = "$(context.taskRun.name)" // one TaskRun per item
	}
	for _, key := range sortedKeys(b.in.Parameters) {
		if err := b.taskParam(key); err != nil {
			return err
		}
	}
	if err := c.fanOut(&b.pt, &b.ts, name, b.t, b.local); err != nil {
		return err
	}
	for _, key := range sortedKeys(b.bound) {
		if _, ok := b.in.Parameters[key]; ok || b.fstrings[key] {
			continue
		}
		if resourcesUse(b.exec, key) || b.resourceCopy(key) {
			continue // the SDK's inputs for a resource (computeResources)
		}
		if !conditionUses(b.t, key) {
			return fmt.Errorf("task %q: input parameter %q is not declared by component %q", name, key, b.t.ComponentRef.Name)
		}
	}
	return nil
}

func (b *taskBuild) taskParam(key string) error {
	ps, err := paramSpec(b.local[key], b.in.Parameters[key])
	if err != nil {
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			ue.Task = b.name
			return ue
		}
		return fmt.Errorf("task %q: input parameter %q: %w", b.name, key, err)
	}
	if sp := b.special[key]; sp != nil {
		return b.c.loopParam(&b.pt, &b.ts, &b.launched, b.t, b.name, key, b.local[key], ps, sp)
	}
	v, given := b.bound[key]
	switch {
	case b.launch && !given:
		// The launcher applies the default, or leaves an optional input
		// absent, as KFP does.
		if ps.Default == nil && !b.in.Parameters[key].IsOptional {
			return fmt.Errorf("task %q: input parameter %q has no value and no default", b.name, key)
		}
		return nil
	case b.stub != "" && !given && ps.Default == nil && b.in.Parameters[key].IsOptional:
		return nil // an optional setting of the claim, not given
	case given:
		b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: b.local[key], Value: *tektonv1.NewStructuredValues(v)})
	case ps.Default == nil:
		return fmt.Errorf("task %q: input parameter %q has no value and no default", b.name, key)
	}
	b.ts.Params = append(b.ts.Params, ps)
	b.launched.params[key] = b.local[key]
	return nil
}

// outputs declares the output parameters as results and locates the
// output artifacts.
func (b *taskBuild) outputs() error {
	c, name := b.c, b.name
	for _, key := range sortedKeys(b.out.Parameters) {
		if err := checkType(b.out.Parameters[key].ParameterType); err != nil {
			return fmt.Errorf("task %q: output parameter %q: %w", name, key, err)
		}
		b.ts.Results = append(b.ts.Results, tektonv1.TaskResult{
			Name: c.results[name][key], Type: tektonv1.ResultsTypeString,
			Description: b.out.Parameters[key].ParameterType,
		})
	}
	b.ph = placeholders{
		task: name, params: b.local, results: c.results[name],
		inPath: map[string]string{}, inURI: map[string]string{},
		outPath: map[string]string{}, outURI: map[string]string{},
	}
	for _, key := range sortedKeys(b.out.Artifacts) {
		b.ph.outPath[key] = c.artifactPath(name, key)
		b.ph.outURI[key] = c.artifactURI(name, key)
	}
	return b.reportArtifacts()
}

// inputArtifacts locates the input artifacts: a producer's, an
// importer's, or a pipeline input's.
func (b *taskBuild) inputArtifacts() error {
	c, name := b.c, b.name
	for _, key := range sortedKeys(b.inputs.Artifacts) {
		a := b.inputs.Artifacts[key]
		if a.collected != nil || a.collectedFrom != nil {
			if err := b.artifactList(key, a); err != nil {
				return err
			}
			continue
		}
		if a.oneOf != nil {
			if err := b.oneOfInput(key, a.oneOf); err != nil {
				return err
			}
			continue
		}
		if a.loopItem != nil {
			if err := b.loopArtifact(key, a); err != nil {
				return err
			}
			continue
		}
		if def := b.in.Artifacts[key]; def != nil && def.IsArtifactList {
			return unsupported(name, "artifact list from a single artifact", "input artifact %q", key)
		}
		switch {
		case a.TaskOutputArtifact != nil && c.importers[a.TaskOutputArtifact.ProducerTask] != nil:
			imp := c.importers[a.TaskOutputArtifact.ProducerTask]
			b.ph.inURI[key] = imp.uri
			if imp.path != "" {
				b.ph.inPath[key] = imp.path
			}
			if imp.metadata != "" {
				b.launched.inMeta[key] = imp.metadata
				b.launched.inMetaParams[key] = imp.metaParams
			}
			for _, p := range imp.after {
				b.after[p] = true
			}
		case a.TaskOutputArtifact != nil:
			src := a.TaskOutputArtifact
			if p := c.flat[src.ProducerTask]; p != nil && p.loop != nil {
				return unsupported(name, "data passed between the tasks of a loop over a run-time list", "input artifact %q from %q", key, src.ProducerTask)
			}
			if _, ok := c.artifacts[src.ProducerTask][src.OutputArtifactKey]; !ok {
				return fmt.Errorf("task %q: input artifact %q: task %q has no output artifact %q", name, key, src.ProducerTask, src.OutputArtifactKey)
			}
			b.ph.inPath[key] = c.artifactPath(src.ProducerTask, src.OutputArtifactKey)
			b.ph.inURI[key] = c.artifactURI(src.ProducerTask, src.OutputArtifactKey)
			b.after[src.ProducerTask] = true
		case a.ComponentInputArtifact != "":
			p, ok := c.params[a.ComponentInputArtifact]
			if !ok {
				return fmt.Errorf("task %q: input artifact %q refers to pipeline input %q, which is not declared", name, key, a.ComponentInputArtifact)
			}
			// Its path is known only from the URI the run gives: the
			// launcher reads it (the task is launched).
			b.ph.inURI[key] = "$(params." + p + ")"
		case len(a.RuntimeArtifact) > 0:
			return unsupported(name, "runtime artifact", "input artifact %q", key)
		default:
			return fmt.Errorf("task %q: input artifact %q has no source", name, key)
		}
		if _, ok := b.in.Artifacts[key]; !ok {
			return fmt.Errorf("task %q: input artifact %q is not declared by component %q", name, key, b.t.ComponentRef.Name)
		}
	}
	return nil
}

// mainStep is the step running the container (under the launcher when
// it needs run-time values), after the prepare step when there is one.
func (b *taskBuild) mainStep() error {
	c, name, exec := b.c, b.name, b.exec
	if exec.Image == "" {
		return fmt.Errorf("task %q: executor of component %q has no image", name, b.t.ComponentRef.Name)
	}
	if b.stub != "" {
		return b.pvcStep()
	}
	main := tektonv1.Step{Name: MainStep, Image: exec.Image}
	var prepare []tektonv1.Step
	var err error
	if b.launch {
		if prepare, err = b.launchedMain(&main); err != nil {
			return err
		}
	} else {
		if main.Command, err = b.ph.resolveAll(exec.Command); err != nil {
			return err
		}
		if main.Args, err = b.ph.resolveAll(exec.Args); err != nil {
			return err
		}
		if len(b.out.Artifacts) > 0 {
			if c.opts.LauncherImage == "" {
				return fmt.Errorf("task %q has output artifacts: Options.LauncherImage (an image with %s) is required", name, LauncherPath)
			}
			prepare = []tektonv1.Step{{Name: PrepareStep, Image: c.opts.LauncherImage,
				Command: []string{LauncherPath}, Args: []string{"mkdir", c.taskDir(name)}}}
		}
	}
	for _, e := range exec.Env {
		if strings.Contains(e.Value, "{{$") {
			return unsupported(name, "placeholder in an environment variable", "env %s", e.Name)
		}
		main.Env = append(main.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	main.ComputeResources = b.resources
	if err := c.applyPlatform(b, &main); err != nil {
		return err
	}
	b.ts.Steps = append(append(b.ts.Steps, prepare...), main)
	b.moveObjects()
	return nil
}

// launchedMain makes main run the container through the launcher, and
// returns the step installing it.
func (b *taskBuild) launchedMain(main *tektonv1.Step) ([]tektonv1.Step, error) {
	c, name := b.c, b.name
	var err error
	if b.launched.spec, err = launcherSpec(name, b.comp, b.exec, b.launched.inMeta, b.launched.artifactLists()); err != nil {
		return nil, err
	}
	// A pipeline's final status reaches a task of an exit pipeline through
	// that pipeline's TASK_FINAL_STATUS input, whatever the task's own
	// input says (a STRUCT): KFP's driver hands it over in KFP's words, so
	// the launcher translates Tekton's here too.
	for key, p := range b.inputs.Parameters {
		if def, ok := b.launched.spec.Inputs.Parameters[key]; ok && len(p.TaskFinalStatus) > 0 {
			def.Type = launcher.TypeTaskFinalStatus
			b.launched.spec.Inputs.Parameters[key] = def
		}
	}
	for _, key := range sortedKeys(b.out.Artifacts) {
		if c.artifacts[name][key] != key {
			return nil, unsupported(name, "output artifact name that is not a Tekton name", "artifact %q (under KFP's executor protocol)", key)
		}
	}
	b.launched.inURIs = b.ph.inURI
	if b.caches {
		if err := c.cached(&b.pt, &b.ts, &b.launched, name, b.local); err != nil {
			return nil, err
		}
	}
	steps, volumes, err := c.launchSteps(b.launched, b.exec)
	if err != nil {
		return nil, err
	}
	main.Command, main.Args, main.VolumeMounts = steps[1].Command, steps[1].Args, steps[1].VolumeMounts
	b.ts.Volumes = append(b.ts.Volumes, volumes...)
	return steps[:1], nil
}

// finish names the PipelineTask and orders it after its producers.
func (b *taskBuild) finish() {
	c := b.c
	b.pt.Name = c.taskNames[b.name]
	b.pt.DisplayName = firstNonEmpty(b.t.TaskInfo.Name, kfpTaskName(b.name))
	b.pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: b.ts}
	if c.store == nil && b.stub == "" {
		b.pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace}}
	}
	if b.t.RetryPolicy != nil {
		b.pt.Retries = b.t.RetryPolicy.MaxRetryCount
	}
	delete(b.after, b.name)
	for _, dep := range sortedKeys(b.after) {
		if c.importers[dep] == nil {
			b.pt.RunAfter = append(b.pt.RunAfter, c.taskNames[dep])
		}
	}
}

var inputParameterRE = regexp.MustCompile(`\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}`)

// resolveFStrings writes into constants the inputs they refer to (the SDK
// compiles an f-string argument, f"Hello {name}", into a constant holding
// {{$.inputs.parameters['pipelinechannel--name']}} and binds that input
// too); it returns the inputs so referred to.
func resolveFStrings(task string, inputs map[string]*InputParameter, bound map[string]string) (map[string]bool, error) {
	used := map[string]bool{}
	for _, key := range sortedKeys(bound) {
		if inputs[key].RuntimeValue == nil || !strings.Contains(bound[key], "{{$.inputs.parameters[") {
			continue
		}
		var missing string
		bound[key] = inputParameterRE.ReplaceAllStringFunc(bound[key], func(ph string) string {
			ref := inputParameterRE.FindStringSubmatch(ph)[1]
			v, ok := bound[ref]
			if !ok || ref == key || inputs[ref].RuntimeValue != nil && strings.Contains(v, "{{$") {
				missing = ref
				return ph
			}
			used[ref] = true
			return v
		})
		if missing != "" {
			return nil, unsupported(task, "f-string of an input the task does not bind", "input parameter %q refers to %q", key, missing)
		}
	}
	return used, nil
}

// takesRuntimeURI says a task takes an artifact whose URI only the run
// gives (a pipeline input artifact, an importer's from a parameter), or
// one with metadata: the launcher gives its path and metadata.
func (c *compiler) takesRuntimeURI(inputs *TaskInputs) bool {
	for _, a := range inputs.Artifacts {
		if a.ComponentInputArtifact != "" {
			return true
		}
		if a.TaskOutputArtifact != nil {
			if imp := c.importers[a.TaskOutputArtifact.ProducerTask]; imp != nil && (imp.path == "" || imp.metadata != "") {
				return true
			}
		}
	}
	return false
}

// resourceCopy says the undeclared input key is the SDK's copy of a
// resource's input (cpu_limit: '{{$.inputs.parameters['pipelinechannel--cpu_limit']}}'),
// which the component does not take.
func (b *taskBuild) resourceCopy(key string) bool {
	in := b.inputs.Parameters[key]
	if in == nil || in.RuntimeValue == nil {
		return false
	}
	m := wholeInputRE.FindStringSubmatch(strings.Trim(string(in.RuntimeValue.Constant), `"`))
	return m != nil && resourcesUse(b.exec, m[1])
}

func conditionUses(t *TaskSpec, key string) bool {
	for _, cond := range t.conds {
		if strings.Contains(cond.expr, key) {
			return true
		}
	}
	return false
}

// refuseTaskFeatures refuses what the task itself asks for beyond the subset.
func refuseTaskFeatures(name string, t *TaskSpec) error {
	switch {
	case t.TriggerPolicy != nil && t.TriggerPolicy.Strategy != "" && t.TriggerPolicy.Strategy != "ALL_UPSTREAM_TASKS_SUCCEEDED" && t.TriggerPolicy.Strategy != "ALL_UPSTREAM_TASKS_COMPLETED":
		return unsupported(name, "trigger strategy "+t.TriggerPolicy.Strategy, "triggerPolicy.strategy")
	case t.CachingOptions != nil && t.CachingOptions.CacheKey != "":
		return unsupported(name, "caching with a cache key", "cachingOptions.cacheKey needs a cache; there is none")
	case len(t.PlatformConfig) > 0 || len(t.TaskConfigPass) > 0 || len(t.ComponentConfig) > 0:
		return unsupported(name, "task platform configuration", "platformConfig/taskConfigPassthroughs/componentConfig")
	}
	if r := t.RetryPolicy; r != nil {
		if r.MaxRetryCount < 0 {
			return fmt.Errorf("task %q: negative maxRetryCount", name)
		}
		if r.BackoffDuration != "" && r.BackoffDuration != "0s" && r.BackoffDuration != "0" {
			return unsupported(name, "retry backoff", "backoffDuration %s: Tekton retries at once", r.BackoffDuration)
		}
	}
	return nil
}

// executor returns the container executor of comp, refusing other kinds.
func (c *compiler) executor(task, compName string, comp *ComponentSpec) (*ContainerSpec, error) {
	if comp.DAG != nil {
		feature := "nested DAG component (pipeline in pipeline)"
		switch {
		case strings.HasPrefix(compName, "comp-condition-"):
			feature = "condition group (dsl.If/dsl.Elif/dsl.Else/dsl.Condition)"
		case strings.HasPrefix(compName, "comp-exit-handler-"):
			feature = "exit handler (dsl.ExitHandler)"
		case strings.HasPrefix(compName, "comp-for-loop-"):
			feature = "loop (dsl.ParallelFor)"
		case strings.HasPrefix(compName, "comp-condition-branches-"):
			feature = "condition branches (dsl.If/dsl.Elif/dsl.Else)"
		}
		return nil, unsupported(task, feature, "component %s is a DAG", compName)
	}
	if len(comp.SinglePlatformSpecs) > 0 || len(comp.TaskConfigPassthroughs) > 0 {
		return nil, unsupported(task, "component platform configuration", "component %s", compName)
	}
	if comp.ExecutorLabel == "" {
		return nil, fmt.Errorf("task %q: component %q has neither an executor nor a DAG", task, compName)
	}
	e, ok := c.spec.DeploymentSpec.Executors[comp.ExecutorLabel]
	if !ok || e == nil {
		return nil, fmt.Errorf("task %q: executor %q is not defined", task, comp.ExecutorLabel)
	}
	switch {
	case len(e.Importer) > 0:
		return nil, unsupported(task, "importer (dsl.importer)", "executor %s", comp.ExecutorLabel)
	case len(e.Resolver) > 0:
		return nil, unsupported(task, "resolver", "executor %s", comp.ExecutorLabel)
	case len(e.CustomJob) > 0:
		return nil, unsupported(task, "custom job", "executor %s", comp.ExecutorLabel)
	case e.Container == nil:
		return nil, fmt.Errorf("task %q: executor %q has no container", task, comp.ExecutorLabel)
	case len(e.Container.Lifecycle) > 0:
		return nil, unsupported(task, "container lifecycle hooks", "executor %s", comp.ExecutorLabel)
	}
	return e.Container, nil
}
