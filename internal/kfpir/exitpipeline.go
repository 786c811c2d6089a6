package kfpir

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/selection"
)

// An exit pipeline whose tasks depend on each other (flatten.go) runs as
// one finally task whose steps are its tasks, in dependency order. Each
// task is compiled as any task is (taskBuild: under the launcher, in its
// component's image) and its TaskSpec becomes steps of the one task:
//
//   - its main step is named as its PipelineTask would be; one step
//     installs the launcher for all;
//   - its output parameters are step results, $(step.results.R.path); a
//     later step's launcher reads one from its file (--param-file; see
//     fileParams), and a when expression or a value with other text
//     around it takes it as $(steps.S.results.R), which Tekton's
//     entrypoint substitutes (no feature flag in Tekton v1.15.1; it reads
//     the text as JSON, so a JSON string, or list or object of strings,
//     reaches those changed);
//   - its artifacts are on the artifacts workspace (or the root's
//     emptyDir), as any task's;
//   - its conditions are step when expressions (input/operator/values,
//     which need no feature flag; the CEL form needs
//     enable-cel-in-when-expression, which the local cluster leaves off);
//     a condition decided at run time is a condition step before it;
//   - it writes a success marker, the step result MarkerResult (the
//     launcher's --cached-result, written once the component succeeded
//     and its outputs were collected, just before its results; a
//     condition step's marker is its outcome).
//
// Failure semantics, as KFP's: every step has onError: continue, so a
// failed task does not stop the others; a task runs only when the marker
// of every task it runs after or takes data from is there (a when
// expression), so the dependants of a failed or skipped task are
// skipped, and tasks independent of it still run. Since onError: continue
// leaves the TaskRun successful, a check step per task at the end, under
// the same when expressions, fails the TaskRun when a task that was to
// run left no marker: the run ends failed, as KFP's would. With an
// object-store root, a task's store step runs after its marker, without
// onError: a failure to store its outputs fails the TaskRun at once (the
// later steps do not run).

// MarkerResult is the step result a step of an exit pipeline writes when
// its component succeeded.
const MarkerResult = "kfp-succeeded"

// installStep installs the launcher for every step of an exit pipeline.
const installStep = "kfp-install"

var siblingRefRE = regexp.MustCompile(`\$\(tasks\.([a-z0-9-]+)\.results\.([A-Za-z0-9_-]+)\)`)

// exitMerge is an exit pipeline's task being built.
type exitMerge struct {
	c    *compiler
	exit string
	pt   tektonv1.PipelineTask
	ts   tektonv1.TaskSpec
	// markers are the marker results of the steps so far, by Tekton name
	// of the task they stand for.
	markers map[string]string
	checks  []tektonv1.Step
}

// exitPipelineTasks adds to finally the task of each exit pipeline whose
// tasks depend on each other.
func (c *compiler) exitPipelineTasks(p *tektonv1.Pipeline) error {
	byExit := map[string][]string{}
	for _, key := range sortedKeys(c.flat) {
		if e := c.flat[key].exitPipeline; e != "" {
			byExit[e] = append(byExit[e], key)
		}
	}
	for _, exit := range sortedKeys(byExit) {
		pt, err := c.exitPipelineTask(exit, byExit[exit])
		if err != nil {
			return err
		}
		p.Spec.Finally = append(p.Spec.Finally, pt)
	}
	return nil
}

func (c *compiler) exitPipelineTask(exit string, keys []string) (tektonv1.PipelineTask, error) {
	m := &exitMerge{c: c, exit: exit, markers: map[string]string{}}
	if c.opts.LauncherImage == "" {
		return m.pt, unsupported(exit, "exit task that is a pipeline whose tasks depend on each other", "its steps run under the launcher: Options.LauncherImage (an image with %s) is required", LauncherPath)
	}
	order, err := c.exitOrder(exit, keys)
	if err != nil {
		return m.pt, err
	}
	for _, key := range order {
		if err := m.member(key); err != nil {
			return m.pt, err
		}
	}
	m.ts.Steps = append(m.ts.Steps, m.checks...)
	m.pt.Name = c.taskNames[exit]
	m.pt.DisplayName = kfpTaskName(exit)
	m.pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: m.ts}
	if c.store == nil {
		m.pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace}}
	}
	return m.pt, nil
}

// exitOrder orders the tasks of an exit pipeline after the tasks they run
// after or take data from: in passes, each taking (by key) the tasks whose
// dependencies earlier passes took.
func (c *compiler) exitOrder(exit string, keys []string) ([]string, error) {
	deps := map[string][]string{}
	for _, k := range keys {
		deps[k] = c.exitDeps(exit, c.flat[k])
	}
	var order []string
	done := map[string]bool{}
	for len(order) < len(keys) {
		progress := false
		for _, k := range keys {
			if done[k] || slices.ContainsFunc(deps[k], func(d string) bool { return !done[d] }) {
				continue
			}
			done[k] = true
			order = append(order, k)
			progress = true
		}
		if !progress {
			return nil, fmt.Errorf("exit task %q: its tasks depend on each other in a cycle", exit)
		}
	}
	return order, nil
}

// exitDeps are the tasks of the exit pipeline at exit that t runs after
// or takes an output of.
func (c *compiler) exitDeps(exit string, t *TaskSpec) []string {
	set := map[string]bool{}
	add := func(k string) {
		if strings.HasPrefix(k, exit+"/") && c.flat[k] != nil {
			set[k] = true
		}
	}
	for _, d := range t.DependentTasks {
		add(d)
	}
	for _, p := range t.Inputs.Parameters {
		if p.TaskOutputParameter != nil {
			add(p.TaskOutputParameter.ProducerTask)
		}
	}
	for _, a := range t.Inputs.Artifacts {
		if a.TaskOutputArtifact != nil {
			add(a.TaskOutputArtifact.ProducerTask)
		}
	}
	return sortedKeys(set)
}

// member adds the task at key, after the condition steps it is the first
// to need.
func (m *exitMerge) member(key string) error {
	c, t := m.c, m.c.flat[key]
	comp := c.spec.Components[t.ComponentRef.Name]
	switch {
	case comp != nil && c.platform[comp.ExecutorLabel] != nil:
		return unsupported(key, "kfp-kubernetes platform configuration in an exit task that is a pipeline", "its tasks run as the steps of one finally task, which has one pod")
	case t.RetryPolicy != nil && t.RetryPolicy.MaxRetryCount > 0:
		return unsupported(key, "retries in an exit task that is a pipeline", "its tasks run as the steps of one finally task; Tekton retries whole tasks")
	}
	when, gates, err := c.whens(key, t.conds)
	if err != nil {
		return err
	}
	for _, g := range gates {
		if err := m.absorb(g, "condition", GateResult, nil); err != nil {
			return err
		}
	}
	before := len(c.resourceParams)
	pt, err := c.containerTask(key, t)
	if err != nil {
		return err
	}
	for i := before; i < len(c.resourceParams); i++ {
		// Resources from pipeline parameters: the run's taskRunSpecs
		// set them on this step of the exit pipeline's task.
		c.resourceParams[i].PipelineTaskName, c.resourceParams[i].Step = c.taskNames[m.exit], pt.Name
	}
	pt.When = when
	var deps []string
	for _, d := range c.exitDeps(m.exit, t) {
		if c.importers[d] == nil {
			deps = append(deps, c.taskNames[d])
		}
	}
	return m.absorb(pt, MainStep, MarkerResult, deps)
}

// absorb makes the steps of pt's TaskSpec steps of the exit pipeline's
// task: main is the step standing for pt, which writes marker; deps are
// the Tekton names of the earlier tasks it runs after.
func (m *exitMerge) absorb(pt tektonv1.PipelineTask, main, marker string, deps []string) error {
	ts := pt.TaskSpec.TaskSpec
	name := pt.Name
	replace, err := m.params(pt, ts, &deps)
	if err != nil {
		return err
	}
	when, err := m.stepWhens(name, pt.When, &deps)
	if err != nil {
		return err
	}
	for _, d := range deps {
		when = append(when, tektonv1.WhenExpression{Input: "$(steps." + d + ".results." + m.markers[d] + ")",
			Operator: selection.In, Values: []string{"true", "false"}})
	}
	var results []tektonv1.StepResult
	for _, r := range ts.Results {
		if r.Name == marker && marker != GateResult {
			return unsupported(name, "output parameter named "+MarkerResult+" in an exit task that is a pipeline", "the name of its steps' success marker")
		}
		results = append(results, tektonv1.StepResult{Name: r.Name, Type: tektonv1.ResultsTypeString, Description: r.Description})
		replace = append(replace, "$(results."+r.Name+".path)", "$(step.results."+r.Name+".path)")
	}
	if marker == MarkerResult {
		results = append(results, tektonv1.StepResult{Name: MarkerResult, Type: tektonv1.ResultsTypeString,
			Description: "written once the component succeeded"})
	}
	rep := strings.NewReplacer(replace...)
	for _, s := range ts.Steps {
		if s.Name == PrepareStep && slices.Equal(s.Args, []string{"install", launchedBinary}) {
			if !slices.ContainsFunc(m.ts.Steps, func(x tektonv1.Step) bool { return x.Name == installStep }) {
				s.Name = installStep
				m.ts.Steps = append(m.ts.Steps, s)
			}
			continue
		}
		for i := range s.Args {
			s.Args[i] = rep.Replace(s.Args[i])
		}
		s.Args = fileParams(s.Args)
		s.When, s.OnError = slices.Clone(when), tektonv1.Continue
		switch s.Name {
		case main:
			s.Name, s.Results = name, results
			if marker == MarkerResult {
				s.Args = withMarker(s.Args)
			}
		case StoreStep:
			// After the component succeeded; a failure to store its
			// outputs fails the task at once, as no check would see it.
			s.When = append(s.When, tektonv1.WhenExpression{Input: "$(steps." + name + ".results." + marker + ")",
				Operator: selection.In, Values: []string{"true", "false"}})
			s.OnError = ""
			s.Name = taskNames.sanitise(name + "-" + s.Name)
		default:
			s.Name = taskNames.sanitise(name + "-" + s.Name)
		}
		m.ts.Steps = append(m.ts.Steps, s)
	}
	m.markers[name] = marker
	m.merge(ts)
	m.checks = append(m.checks, m.check(name, marker, when))
	return nil
}

var stepRefRE = regexp.MustCompile(`^\$\(steps\.([a-z0-9-]+)\.results\.([A-Za-z0-9_-]+)\)$`)

// fileParams makes an input parameter that is an earlier step's result
// whole (--param KEY=$(steps.S.results.R) of kfp-task launch, --param KEY
// TYPE $(steps.S.results.R) of kfp-task condition) read from the result's
// file, so its text arrives as written: Tekton's entrypoint, substituting
// $(steps...), reads the text as JSON (a JSON string loses its quotes, a
// list or object of strings becomes empty).
func fileParams(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if out[i] != "--param" {
			continue
		}
		if key, ref, ok := strings.Cut(out[i+1], "="); ok && out[0] == "launch" {
			if path := stepResultFile(ref); path != "" {
				out[i], out[i+1] = "--param-file", key+"="+path
			}
			continue
		}
		if out[0] == "condition" && i+3 < len(out) {
			if path := stepResultFile(out[i+3]); path != "" {
				out[i], out[i+3] = "--param-file", path
			}
		}
	}
	return out
}

// stepResultFile is the file of the step result ref refers to, wholly:
// Tekton v1.15.1 keeps step S's result R in /tekton/steps/step-S/results/R
// (what $(step.results.R.path) is in S), which every step mounts.
func stepResultFile(ref string) string {
	m := stepRefRE.FindStringSubmatch(ref)
	if m == nil {
		return ""
	}
	return "/tekton/steps/step-" + m[1] + "/results/" + m[2]
}

// withMarker adds the launcher's success marker to a main step's args,
// before the arguments after -- if any.
func withMarker(args []string) []string {
	flag := []string{"--cached-result", "$(step.results." + MarkerResult + ".path)"}
	if i := slices.Index(args, "--"); i >= 0 {
		return slices.Concat(args[:i], flag, args[i:])
	}
	return append(args, flag...)
}

// params moves pt's params to the exit pipeline's task, each renamed
// after the task, and gives the replacements of their references. A
// param taking an output of an earlier step is no param: its reference
// becomes the step result's, and the step one of deps.
func (m *exitMerge) params(pt tektonv1.PipelineTask, ts tektonv1.TaskSpec, deps *[]string) ([]string, error) {
	var replace []string
	values := map[string]string{}
	for _, p := range pt.Params {
		values[p.Name] = p.Value.StringVal
	}
	for _, ps := range ts.Params {
		v, given := values[ps.Name]
		if given {
			stepRef, err := m.siblingRefs(pt.Name, v, deps)
			if err != nil {
				return nil, err
			}
			if stepRef != "" {
				replace = append(replace, "$(params."+ps.Name+")", stepRef)
				continue
			}
		}
		renamed := paramNames.sanitise(pt.Name + "-" + ps.Name)
		replace = append(replace, "$(params."+ps.Name+")", "$(params."+renamed+")", "$(params."+ps.Name+"[*])", "$(params."+renamed+"[*])")
		ps.Name = renamed
		m.ts.Params = append(m.ts.Params, ps)
		if given {
			m.pt.Params = append(m.pt.Params, tektonv1.Param{Name: renamed, Value: *tektonv1.NewStructuredValues(v)})
		}
	}
	return replace, nil
}

// siblingRefs is v with its references to the results of earlier tasks
// of the exit pipeline made step results' (empty when it has none),
// adding those tasks to deps.
func (m *exitMerge) siblingRefs(task, v string, deps *[]string) (string, error) {
	found := false
	out := siblingRefRE.ReplaceAllStringFunc(v, func(ref string) string {
		sub := siblingRefRE.FindStringSubmatch(ref)
		if _, ok := m.markers[sub[1]]; !ok {
			return ref
		}
		found = true
		if !slices.Contains(*deps, sub[1]) {
			*deps = append(*deps, sub[1])
		}
		return "$(steps." + sub[1] + ".results." + sub[2] + ")"
	})
	if !found {
		return "", nil
	}
	if strings.Contains(siblingRefRE.ReplaceAllString(strings.ReplaceAll(out, "$(steps.", ""), ""), "$(") {
		return "", unsupported(task, "value mixing an output of a task of an exit pipeline with other run-time values", "%q", v)
	}
	sort.Strings(*deps)
	return out, nil
}

// stepWhens are when expressions of a step: an earlier task's result is
// its step result (the task one of deps), any other run-time value a
// param of the exit pipeline's task.
func (m *exitMerge) stepWhens(task string, when tektonv1.WhenExpressions, deps *[]string) (tektonv1.StepWhenExpressions, error) {
	var out tektonv1.StepWhenExpressions
	for i, w := range when {
		ref, err := m.siblingRefs(task, w.Input, deps)
		if err != nil {
			return nil, err
		}
		switch {
		case ref != "":
			w.Input = ref
		case strings.Contains(w.Input, "$("):
			p := paramNames.sanitise(fmt.Sprintf("%s-when-%d", task, i))
			m.ts.Params = append(m.ts.Params, tektonv1.ParamSpec{Name: p, Type: tektonv1.ParamTypeString})
			m.pt.Params = append(m.pt.Params, tektonv1.Param{Name: p, Value: *tektonv1.NewStructuredValues(w.Input)})
			w.Input = "$(params." + p + ")"
		}
		out = append(out, w)
	}
	return out, nil
}

// merge adds ts's volumes and workspaces, once each.
func (m *exitMerge) merge(ts tektonv1.TaskSpec) {
	for _, v := range ts.Volumes {
		if !slices.ContainsFunc(m.ts.Volumes, func(x corev1.Volume) bool { return x.Name == v.Name }) {
			m.ts.Volumes = append(m.ts.Volumes, v)
		}
	}
	for _, w := range ts.Workspaces {
		if !slices.ContainsFunc(m.ts.Workspaces, func(x tektonv1.WorkspaceDeclaration) bool { return x.Name == w.Name }) {
			m.ts.Workspaces = append(m.ts.Workspaces, w)
		}
	}
}

// check is the step failing the task when the step name, under when, left
// no marker: the launcher's condition command fails on a value that is
// no boolean, and Tekton's entrypoint leaves the reference to a missing
// step result as it is.
func (m *exitMerge) check(name, marker string, when tektonv1.StepWhenExpressions) tektonv1.Step {
	input := name + "-succeeded"
	return tektonv1.Step{
		Name: taskNames.sanitise("check-" + name), Image: m.c.opts.LauncherImage, Command: []string{LauncherPath},
		Args: []string{"condition", "--condition", "inputs.parameter_values['" + input + "'] in [true, false]",
			"--result", LauncherDir + "/" + name + ".checked",
			"--param", input, "BOOLEAN", "$(steps." + name + ".results." + marker + ")"},
		VolumeMounts: []corev1.VolumeMount{{Name: LauncherVolume, MountPath: LauncherDir}},
		When:         slices.Clone(when),
	}
}
