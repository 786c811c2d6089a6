package kfpir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// ArtifactsWorkspace is the workspace every task mounts at the pipeline
	// root's path; a PipelineRun must bind it (for example to a PVC).
	ArtifactsWorkspace = "artifacts"
	// DefaultPipelineRoot is used when neither Options nor the IR name one.
	DefaultPipelineRoot = "file:///kfp/artifacts"
	// DefaultMaxBytes is the largest compiled Pipeline (as JSON) Compile
	// returns: etcd refuses objects above 1.5 MiB, and the API server adds
	// managed fields and annotations to what is stored.
	DefaultMaxBytes = 1 << 20
	// LauncherPath is the helper binary Options.LauncherImage must hold.
	LauncherPath = "/kfp/bin/kfp-task"
	// MainStep is the name of the step that runs the executor container.
	MainStep = "main"
	// PrepareStep is the name of the step that creates output artifact
	// directories before MainStep runs.
	PrepareStep = "prepare"
)

// Options parameterise Compile.
type Options struct {
	// Name, Namespace, Labels and Annotations become the Pipeline's metadata.
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	// PipelineRoot is where artifacts are stored. Only file:// roots with an
	// absolute path are supported: the path is the mount path of the
	// ArtifactsWorkspace in every task. Empty: the IR's defaultPipelineRoot
	// when it is a file:// root, else DefaultPipelineRoot.
	PipelineRoot string
	// LauncherImage holds LauncherPath (the contract is in the package
	// documentation). Required only when a task has output artifacts.
	LauncherImage string
	// MaxBytes bounds the compiled Pipeline's JSON size; 0 means
	// DefaultMaxBytes.
	MaxBytes int
	// Caching says the artifacts workspace outlives the run (a volume the
	// namespace's runs share), so tasks with cachingOptions.enableCache
	// keep and reuse their executions there (KFP's caching, caching.go).
	// Without it such tasks run every time, and AnnotationCaching on the
	// Pipeline says so.
	Caching bool
	// TenantNamespace is the namespace whose pipeline this is, when its
	// runs execute in another (Namespace, a Provider's that serves other
	// namespaces): kfp-kubernetes settings may then name no Secret,
	// ConfigMap or PVC, which would be Namespace's.
	TenantNamespace string
}

// UnsupportedError is the refusal of an IR feature outside the supported
// subset. Task is the KFP task name, empty for pipeline-level features.
type UnsupportedError struct {
	Feature string
	Task    string
	Detail  string
}

func (e *UnsupportedError) Error() string {
	where := "the pipeline"
	if e.Task != "" {
		where = fmt.Sprintf("task %q", e.Task)
	}
	msg := fmt.Sprintf("unsupported KFP feature in %s: %s", where, e.Feature)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func unsupported(task, feature, detail string, args ...any) error {
	return &UnsupportedError{Task: task, Feature: feature, Detail: fmt.Sprintf(detail, args...)}
}

// compiler holds the state of one Compile call.
type compiler struct {
	spec      *PipelineSpec
	opts      Options
	rootPath  string // absolute path of the pipeline root, the workspace mount path
	rootURI   string // the pipeline root without a trailing slash
	taskNames map[string]string
	params    map[string]string // root input parameter → Pipeline param
	// outputs of each task, by KFP task name: parameter key → result name,
	// artifact key → directory name.
	results   map[string]map[string]string
	artifacts map[string]map[string]string
	// flat are the pipeline's container tasks by flat key (flatten.go);
	// groups the keys of the DAG tasks inlined; gates the condition tasks
	// already made, by key.
	flattener *flattener
	flat      map[string]*TaskSpec
	gates     map[string]bool
	// caches: some task keeps its executions in the cache.
	caches bool
	// platform is the kfp-kubernetes config by executor; taskRunSpecs the
	// pod settings it gives (platform.go).
	platform     map[string]*kubernetesConfig
	taskRunSpecs []tektonv1.PipelineTaskRunSpec
	// importers are the importer tasks' artifacts (importer.go).
	importers map[string]*importer
}

// Compile translates a parsed KFP v2 pipeline into a Tekton Pipeline. It
// refuses (with an *UnsupportedError naming the feature and the task) every
// IR feature outside the documented subset, and returns only Pipelines that
// pass Tekton's own validation and fit in Options.MaxBytes.
func Compile(spec *PipelineSpec, opts Options) (*tektonv1.Pipeline, error) {
	if spec == nil || spec.Root == nil {
		return nil, errors.New("kfp IR: no pipeline spec")
	}
	if err := checkSchemaVersion(spec.SchemaVersion); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		return nil, errors.New("compile: Options.Name is required")
	}
	c := &compiler{spec: spec, opts: opts}
	if err := c.pipelineLevel(); err != nil {
		return nil, err
	}
	p := &tektonv1.Pipeline{
		TypeMeta: metav1.TypeMeta{APIVersion: "tekton.dev/v1", Kind: "Pipeline"},
		ObjectMeta: metav1.ObjectMeta{
			Name: opts.Name, Namespace: opts.Namespace,
			Labels: copyMap(opts.Labels), Annotations: copyMap(opts.Annotations),
		},
		Spec: tektonv1.PipelineSpec{
			DisplayName: firstNonEmpty(spec.PipelineInfo.DisplayName, spec.PipelineInfo.Name),
			Description: spec.PipelineInfo.Description,
			Workspaces:  []tektonv1.PipelineWorkspaceDeclaration{{Name: ArtifactsWorkspace, Description: "the pipeline root " + c.rootURI}},
		},
	}
	var err error
	if p.Spec.Params, err = c.pipelineParams(); err != nil {
		return nil, err
	}
	tasks := c.flat
	// Refuse unsupported features first, so they are reported before any
	// error they cause in the tasks that consume them.
	c.importers = map[string]*importer{}
	for _, name := range sortedKeys(tasks) {
		imp, err := c.importerOf(name)
		if err != nil {
			return nil, err
		}
		if imp != nil {
			c.importers[name] = imp
			continue
		}
		ref := tasks[name].ComponentRef.Name
		if _, err := c.executor(name, ref, spec.Components[ref]); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedKeys(tasks) {
		if err := c.declareOutputs(name, tasks[name]); err != nil {
			return nil, err
		}
	}
	if err := c.annotateOutputs(p); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(tasks) {
		if c.importers[name] != nil {
			continue // no pod: its consumers take the URI
		}
		pt, gates, err := c.task(name, tasks[name])
		if err != nil {
			return nil, err
		}
		p.Spec.Tasks = append(p.Spec.Tasks, gates...)
		if tasks[name].final {
			p.Spec.Finally = append(p.Spec.Finally, pt)
		} else {
			p.Spec.Tasks = append(p.Spec.Tasks, pt)
		}
	}
	if p.Spec.Results, err = c.pipelineResults(); err != nil {
		return nil, err
	}
	if err := c.cachingParam(p); err != nil {
		return nil, err
	}
	if err := c.annotateTaskRunSpecs(p); err != nil {
		return nil, err
	}
	if ferr := p.Validate(context.Background()); ferr != nil {
		return nil, fmt.Errorf("compiled Pipeline fails Tekton validation: %w", ferr)
	}
	size, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if len(size) > limit {
		return nil, fmt.Errorf("compiled Pipeline is %d bytes of JSON, above the limit of %d bytes (etcd stores at most 1.5 MiB per object); split the pipeline or shrink its components", len(size), limit)
	}
	return p, nil
}

// pipelineLevel checks what concerns the whole pipeline and settles names and
// the pipeline root.
func (c *compiler) pipelineLevel() error {
	spec := c.spec
	if len(spec.RuntimeConfig) > 0 && !isEmptyJSON(spec.RuntimeConfig) {
		return unsupported("", "PipelineJob runtimeConfig", "pass parameter values with the run instead")
	}
	root := spec.Root
	if root.DAG == nil || root.ExecutorLabel != "" {
		return unsupported("", "single-component pipeline", "the root must be a DAG")
	}
	if len(root.SinglePlatformSpecs) > 0 || len(root.TaskConfigPassthroughs) > 0 {
		return unsupported("", "platform-specific root configuration", "singlePlatformSpecs/taskConfigPassthroughs")
	}
	if len(root.DAG.Tasks) == 0 {
		return errors.New("kfp IR: the root DAG has no tasks")
	}
	if err := c.pipelineRoot(); err != nil {
		return err
	}
	var err error
	if c.flattener, err = flatten(spec); err != nil {
		return err
	}
	c.flat = c.flattener.tasks
	if len(c.flat) == 0 {
		return errors.New("kfp IR: the pipeline has no container tasks")
	}
	if c.taskNames, err = flatTaskNames(c.tektonTaskKeys()); err != nil {
		return err
	}
	if err := c.parsePlatform(); err != nil {
		return err
	}
	c.gates = map[string]bool{}
	// A pipeline input artifact is a param holding its URI; KFP's input
	// names are one namespace, parameters and artifacts alike.
	var rootParams []string
	if root.InputDefinitions != nil {
		rootParams = append(sortedKeys(root.InputDefinitions.Parameters), sortedKeys(root.InputDefinitions.Artifacts)...)
	}
	if c.params, err = paramNames.assign(rootParams); err != nil {
		return err
	}
	c.results = map[string]map[string]string{}
	c.artifacts = map[string]map[string]string{}
	return nil
}

func (c *compiler) taskUsingExecutor(label string) string {
	tasks := c.flat
	for _, name := range sortedKeys(tasks) {
		if comp := c.spec.Components[tasks[name].ComponentRef.Name]; comp != nil && comp.ExecutorLabel == label {
			return name
		}
	}
	return ""
}

func (c *compiler) pipelineRoot() error {
	root := c.opts.PipelineRoot
	if root == "" {
		root = DefaultPipelineRoot
		if strings.HasPrefix(c.spec.DefaultPipelineRoot, "file://") {
			root = c.spec.DefaultPipelineRoot
		}
	}
	u, err := url.Parse(root)
	if err != nil || u.Scheme != "file" || u.Host != "" || !path.IsAbs(u.Path) || u.RawQuery != "" {
		return unsupported("", "pipeline root "+root, "only file:///absolute/path roots (a workspace) are supported; object stores are not yet")
	}
	c.rootPath = path.Clean(u.Path)
	if c.rootPath == "/" {
		return unsupported("", "pipeline root "+root, "the root cannot be /")
	}
	c.rootURI = "file://" + c.rootPath
	return nil
}

func (c *compiler) pipelineParams() (tektonv1.ParamSpecs, error) {
	var out tektonv1.ParamSpecs
	if c.spec.Root.InputDefinitions == nil {
		return nil, nil
	}
	defs := c.spec.Root.InputDefinitions.Parameters
	for _, name := range sortedKeys(defs) {
		ps, err := paramSpec(c.params[name], defs[name])
		if err != nil {
			return nil, fmt.Errorf("pipeline input parameter %q: %w", name, err)
		}
		out = append(out, ps)
	}
	arts := c.spec.Root.InputDefinitions.Artifacts
	for _, name := range sortedKeys(arts) {
		ps := tektonv1.ParamSpec{Name: c.params[name], Type: tektonv1.ParamTypeString,
			Description: "input artifact (" + firstNonEmpty(arts[name].ArtifactType.SchemaTitle, "system.Artifact") + "): its URI (file:///...)"}
		if arts[name].IsOptional {
			ps.Default = tektonv1.NewStructuredValues("") // absent
		}
		out = append(out, ps)
	}
	return out, nil
}

// paramSpec is a string Tekton param for a KFP parameter; the KFP type is
// kept in the description.
func paramSpec(name string, def *ParameterSpec) (tektonv1.ParamSpec, error) {
	if err := checkType(def.ParameterType); err != nil {
		return tektonv1.ParamSpec{}, err
	}
	ps := tektonv1.ParamSpec{Name: name, Type: tektonv1.ParamTypeString, Description: def.ParameterType}
	if def.Description != "" {
		ps.Description += ": " + def.Description
	}
	if len(def.DefaultValue) > 0 {
		v, err := valueText(def.DefaultValue, def.ParameterType)
		if err != nil {
			return ps, fmt.Errorf("default value: %w", err)
		}
		ps.Default = tektonv1.NewStructuredValues(v)
	}
	return ps, nil
}

func checkType(t string) error {
	switch t {
	case "STRING", "NUMBER_INTEGER", "NUMBER_DOUBLE", "BOOLEAN", "LIST", "STRUCT":
		return nil
	case "TASK_FINAL_STATUS":
		return nil // bound to a taskFinalStatus source, in an exit task
	}
	return fmt.Errorf("unknown parameterType %q", t)
}

// valueText is the text a KFP parameter value takes in a Tekton param: a
// string as it is, an integer without a fraction, a double in the shortest
// form that round-trips, a boolean as true/false, a list or struct as
// compact JSON (object keys sorted).
func valueText(raw json.RawMessage, typ string) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case nil:
		return "", errors.New("null value")
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		if typ == "NUMBER_INTEGER" {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return "", fmt.Errorf("%v is not an integer", x)
			}
			return strconv.FormatInt(int64(x), 10), nil
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	default:
		b, err := json.Marshal(x)
		return string(b), err
	}
}

// declareOutputs names the results and artifact directories of a task's
// component before any task refers to them.
func (c *compiler) declareOutputs(name string, t *TaskSpec) error {
	comp := c.spec.Components[t.ComponentRef.Name]
	c.results[name] = map[string]string{}
	c.artifacts[name] = map[string]string{}
	if comp == nil || comp.OutputDefinitions == nil {
		return nil
	}
	var err error
	if c.results[name], err = resultNames.assign(sortedKeys(comp.OutputDefinitions.Parameters)); err != nil {
		return fmt.Errorf("task %q: %w", name, err)
	}
	if c.artifacts[name], err = resultNames.assign(sortedKeys(comp.OutputDefinitions.Artifacts)); err != nil {
		return fmt.Errorf("task %q: %w", name, err)
	}
	return nil
}

// AnnotationOutputs on a compiled Pipeline lists its output artifacts
// (JSON, []meta.OutputArtifact) so whoever reads a finished run can say
// where each artifact is.
const AnnotationOutputs = meta.AnnotationOutputs

func (c *compiler) annotateOutputs(p *tektonv1.Pipeline) error {
	var outputs []meta.OutputArtifact
	for _, task := range sortedKeys(c.artifacts) {
		if t := c.flat[task]; (t != nil && t.loop != nil) || c.importers[task] != nil {
			continue // one directory per TaskRun, not known before the run; or not the run's
		}
		for _, key := range sortedKeys(c.artifacts[task]) {
			outputs = append(outputs, meta.OutputArtifact{Component: task, Output: key, URI: c.artifactURI(task, key)})
		}
	}
	if len(outputs) == 0 {
		return nil
	}
	data, err := json.Marshal(outputs)
	if err != nil {
		return err
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[AnnotationOutputs] = string(data)
	return nil
}

// artifactPath and artifactURI locate the artifact key of task under the
// pipeline root: <root>/<PipelineRun name>/<Tekton task name>/<artifact>.
func (c *compiler) artifactPath(task, key string) string {
	return c.taskDir(task) + "/" + c.artifacts[task][key]
}

// taskDir is the directory holding the output artifacts of task.
func (c *compiler) taskDir(task string) string {
	return "$(workspaces." + ArtifactsWorkspace + ".path)/$(context.pipelineRun.name)/" + c.taskDirName(task)
}

func (c *compiler) artifactURI(task, key string) string {
	return c.rootURI + "/$(context.pipelineRun.name)/" + c.taskDirName(task) + "/" + c.artifacts[task][key]
}

// taskDirName names a task's artifact directory: its Tekton name, or its
// TaskRun's for a task fanned out over a run-time loop's items.
func (c *compiler) taskDirName(task string) string {
	if t := c.flat[task]; t != nil && t.loop != nil {
		return "$(context.taskRun.name)"
	}
	return c.taskNames[task]
}

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
	var pt tektonv1.PipelineTask
	comp, ok := c.spec.Components[t.ComponentRef.Name]
	if !ok || comp == nil {
		return pt, fmt.Errorf("task %q: component %q is not defined", name, t.ComponentRef.Name)
	}
	exec, err := c.executor(name, t.ComponentRef.Name, comp)
	if err != nil {
		return pt, err
	}
	// Resources from parameters are refused before the inputs the SDK
	// binds for them (which the component does not declare) are checked.
	if _, err := computeResources(name, exec.Resources); err != nil {
		return pt, err
	}
	in := comp.InputDefinitions
	if in == nil {
		in = &IODefinitions{}
	}
	out := comp.OutputDefinitions
	if out == nil {
		out = &IODefinitions{}
	}
	for _, defs := range []map[string]*ArtifactSpec{in.Artifacts, out.Artifacts} {
		for _, key := range sortedKeys(defs) {
			if defs[key].IsArtifactList {
				return pt, unsupported(name, "artifact list (dsl.Collected or List[Artifact])", "artifact %q", key)
			}
		}
	}
	inputs := t.Inputs
	if inputs == nil {
		inputs = &TaskInputs{}
	}
	after := map[string]bool{}
	for _, dep := range t.DependentTasks {
		if _, ok := c.taskNames[dep]; !ok {
			return pt, fmt.Errorf("task %q: dependent task %q is not in the DAG", name, dep)
		}
		after[dep] = true
	}

	// Values of the task's input parameters, at PipelineTask level; a
	// loop's item and a loop's collected outputs are bound apart (loops.go).
	bound := map[string]string{}
	special := map[string]*InputParameter{}
	for _, key := range sortedKeys(inputs.Parameters) {
		if p := inputs.Parameters[key]; p.loopItem != nil || p.collected != nil || p.collectedFrom != nil {
			special[key] = p
			continue
		}
		typ := ""
		if def, ok := in.Parameters[key]; ok {
			typ = def.ParameterType
		}
		if status := len(inputs.Parameters[key].TaskFinalStatus) > 0; status && !t.final {
			return pt, unsupported(name, "task final status in a task that is not an exit task", "input parameter %q", key)
		} else if !status && typ == "TASK_FINAL_STATUS" {
			return pt, unsupported(name, "task final status input without a taskFinalStatus source", "input parameter %q", key)
		}
		v, producer, err := c.inputValue(name, key, inputs.Parameters[key], typ)
		if err != nil {
			return pt, err
		}
		bound[key] = v
		if producer != "" {
			after[producer] = true
		}
	}
	fstrings, err := resolveFStrings(name, inputs.Parameters, bound)
	if err != nil {
		return pt, err
	}
	// The TaskSpec's params are the component's input parameters.
	local, err := paramNames.assign(sortedKeys(in.Parameters))
	if err != nil {
		return pt, fmt.Errorf("task %q: %w", name, err)
	}
	ts := tektonv1.TaskSpec{
		Workspaces: []tektonv1.WorkspaceDeclaration{{Name: ArtifactsWorkspace, MountPath: c.rootPath}},
	}
	caches := c.opts.Caching && t.CachingOptions != nil && t.CachingOptions.EnableCache
	launch := needsLauncher(exec) || takesFinalStatus(in) || collects(special) || caches || c.takesRuntimeURI(inputs)
	launched := launchedTask{name: kfpTaskName(name), tektonName: c.taskNames[name], params: map[string]string{},
		inURIs: map[string]string{}, inMeta: map[string]string{}, results: c.results[name], items: map[string][]string{}, itemTypes: map[string]string{}}
	if t.loop != nil {
		launched.tektonName = "$(context.taskRun.name)" // one TaskRun per item
	}
	for _, key := range sortedKeys(in.Parameters) {
		ps, err := paramSpec(local[key], in.Parameters[key])
		if err != nil {
			var ue *UnsupportedError
			if errors.As(err, &ue) {
				ue.Task = name
				return pt, ue
			}
			return pt, fmt.Errorf("task %q: input parameter %q: %w", name, key, err)
		}
		if sp := special[key]; sp != nil {
			if err := c.loopParam(&pt, &ts, &launched, name, key, local[key], ps, sp); err != nil {
				return pt, err
			}
			continue
		}
		v, given := bound[key]
		switch {
		case launch && !given:
			// The launcher applies the default, or leaves an optional input
			// absent, as KFP does.
			if ps.Default == nil && !in.Parameters[key].IsOptional {
				return pt, fmt.Errorf("task %q: input parameter %q has no value and no default", name, key)
			}
			continue
		case given:
			pt.Params = append(pt.Params, tektonv1.Param{Name: local[key], Value: *tektonv1.NewStructuredValues(v)})
		case ps.Default == nil:
			return pt, fmt.Errorf("task %q: input parameter %q has no value and no default", name, key)
		}
		ts.Params = append(ts.Params, ps)
		launched.params[key] = local[key]
	}
	if err := c.fanOut(&pt, &ts, name, t, local); err != nil {
		return pt, err
	}
	for _, key := range sortedKeys(bound) {
		if _, ok := in.Parameters[key]; !ok && !fstrings[key] && resourcesUse(exec, key) {
			return pt, unsupported(name, "resource from a pipeline parameter", "input %q sets the container's resources", key)
		}
		if _, ok := in.Parameters[key]; !ok && !conditionUses(t, key) && !fstrings[key] {
			return pt, fmt.Errorf("task %q: input parameter %q is not declared by component %q", name, key, t.ComponentRef.Name)
		}
	}
	for _, key := range sortedKeys(out.Parameters) {
		if err := checkType(out.Parameters[key].ParameterType); err != nil {
			return pt, fmt.Errorf("task %q: output parameter %q: %w", name, key, err)
		}
		ts.Results = append(ts.Results, tektonv1.TaskResult{
			Name: c.results[name][key], Type: tektonv1.ResultsTypeString,
			Description: out.Parameters[key].ParameterType,
		})
	}

	// Artifacts: inputs are the producers' locations, outputs this task's.
	ph := placeholders{
		task: name, params: local, results: c.results[name],
		inPath: map[string]string{}, inURI: map[string]string{},
		outPath: map[string]string{}, outURI: map[string]string{},
	}
	for _, key := range sortedKeys(inputs.Artifacts) {
		a := inputs.Artifacts[key]
		switch {
		case a.TaskOutputArtifact != nil && c.importers[a.TaskOutputArtifact.ProducerTask] != nil:
			imp := c.importers[a.TaskOutputArtifact.ProducerTask]
			ph.inURI[key] = imp.uri
			if imp.path != "" {
				ph.inPath[key] = imp.path
			}
			if imp.metadata != "" {
				launched.inMeta[key] = imp.metadata
			}
		case a.TaskOutputArtifact != nil:
			src := a.TaskOutputArtifact
			if p := c.flat[src.ProducerTask]; p != nil && p.loop != nil {
				return pt, unsupported(name, "data passed between the tasks of a loop over a run-time list", "input artifact %q from %q", key, src.ProducerTask)
			}
			if _, ok := c.taskNames[src.ProducerTask]; !ok {
				return pt, fmt.Errorf("task %q: input artifact %q: producer task %q is not in the DAG", name, key, src.ProducerTask)
			}
			if _, ok := c.artifacts[src.ProducerTask][src.OutputArtifactKey]; !ok {
				return pt, fmt.Errorf("task %q: input artifact %q: task %q has no output artifact %q", name, key, src.ProducerTask, src.OutputArtifactKey)
			}
			ph.inPath[key] = c.artifactPath(src.ProducerTask, src.OutputArtifactKey)
			ph.inURI[key] = c.artifactURI(src.ProducerTask, src.OutputArtifactKey)
			after[src.ProducerTask] = true
		case a.ComponentInputArtifact != "":
			p, ok := c.params[a.ComponentInputArtifact]
			if !ok {
				return pt, fmt.Errorf("task %q: input artifact %q refers to pipeline input %q, which is not declared", name, key, a.ComponentInputArtifact)
			}
			// Its path is known only from the URI the run gives: the
			// launcher reads it (the task is launched).
			ph.inURI[key] = "$(params." + p + ")"
		case len(a.RuntimeArtifact) > 0:
			return pt, unsupported(name, "runtime artifact", "input artifact %q", key)
		default:
			return pt, fmt.Errorf("task %q: input artifact %q has no source", name, key)
		}
		if _, ok := in.Artifacts[key]; !ok {
			return pt, fmt.Errorf("task %q: input artifact %q is not declared by component %q", name, key, t.ComponentRef.Name)
		}
	}
	for _, key := range sortedKeys(out.Artifacts) {
		ph.outPath[key] = c.artifactPath(name, key)
		ph.outURI[key] = c.artifactURI(name, key)
	}

	main := tektonv1.Step{Name: MainStep, Image: exec.Image}
	if exec.Image == "" {
		return pt, fmt.Errorf("task %q: executor of component %q has no image", name, t.ComponentRef.Name)
	}
	var prepare []tektonv1.Step
	if launch {
		if launched.spec, err = launcherSpec(name, comp, exec, launched.inMeta); err != nil {
			return pt, err
		}
		for _, key := range sortedKeys(out.Artifacts) {
			if c.artifacts[name][key] != key {
				return pt, unsupported(name, "output artifact name that is not a Tekton name", "artifact %q (under KFP's executor protocol)", key)
			}
		}
		launched.inURIs = ph.inURI
		if caches {
			if err := c.cached(&pt, &ts, &launched, name, local); err != nil {
				return pt, err
			}
		}
		steps, volumes, err := c.launchSteps(launched, exec)
		if err != nil {
			return pt, err
		}
		prepare, main.Command, main.Args, main.VolumeMounts = steps[:1], steps[1].Command, steps[1].Args, steps[1].VolumeMounts
		ts.Volumes = volumes
	} else {
		if main.Command, err = ph.resolveAll(exec.Command); err != nil {
			return pt, err
		}
		if main.Args, err = ph.resolveAll(exec.Args); err != nil {
			return pt, err
		}
	}
	for _, e := range exec.Env {
		if strings.Contains(e.Value, "{{$") {
			return pt, unsupported(name, "placeholder in an environment variable", "env %s", e.Name)
		}
		main.Env = append(main.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	if main.ComputeResources, err = computeResources(name, exec.Resources); err != nil {
		return pt, err
	}
	if err := c.applyPlatform(name, comp.ExecutorLabel, &pt, &ts, &main); err != nil {
		return pt, err
	}
	if launch {
		ts.Steps = append(ts.Steps, prepare...)
	} else if len(out.Artifacts) > 0 {
		if c.opts.LauncherImage == "" {
			return pt, fmt.Errorf("task %q has output artifacts: Options.LauncherImage (an image with %s) is required", name, LauncherPath)
		}
		ts.Steps = append(ts.Steps, tektonv1.Step{
			Name: PrepareStep, Image: c.opts.LauncherImage,
			Command: []string{LauncherPath}, Args: []string{"mkdir", c.taskDir(name)},
		})
	}
	ts.Steps = append(ts.Steps, main)

	pt.Name = c.taskNames[name]
	pt.DisplayName = firstNonEmpty(t.TaskInfo.Name, kfpTaskName(name))
	pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: ts}
	pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace}}
	if t.RetryPolicy != nil {
		pt.Retries = t.RetryPolicy.MaxRetryCount
	}
	delete(after, name)
	for _, dep := range sortedKeys(after) {
		if c.importers[dep] == nil {
			pt.RunAfter = append(pt.RunAfter, c.taskNames[dep])
		}
	}
	return pt, nil
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

// resourcesUse says the executor's resources refer to input key.
func resourcesUse(exec *ContainerSpec, key string) bool {
	data, _ := json.Marshal(exec.Resources)
	return strings.Contains(string(data), "'"+key+"'")
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

// inputValue is the PipelineTask-level value of a task's input parameter and
// the task producing it, if any.
func (c *compiler) inputValue(task, key string, in *InputParameter, typ string) (string, string, error) {
	set := 0
	for _, b := range []bool{in.ComponentInputParameter != "", in.RuntimeValue != nil, in.TaskOutputParameter != nil, len(in.TaskFinalStatus) > 0, in.ParameterExpression != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return "", "", fmt.Errorf("task %q: input parameter %q must have exactly one source", task, key)
	}
	switch {
	case in.ComponentInputParameter != "":
		p, ok := c.params[in.ComponentInputParameter]
		if !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q refers to pipeline input %q, which is not declared", task, key, in.ComponentInputParameter)
		}
		return "$(params." + p + ")", "", nil
	case in.RuntimeValue != nil:
		if len(in.RuntimeValue.Constant) == 0 {
			return "", "", unsupported(task, "runtime value without a constant", "input parameter %q", key)
		}
		v, err := valueText(in.RuntimeValue.Constant, typ)
		if err != nil {
			return "", "", fmt.Errorf("task %q: input parameter %q: %w", task, key, err)
		}
		if err := checkLiteral(task, v); err != nil {
			return "", "", err
		}
		return v, "", nil
	case in.loopItem != nil:
		return "", "", unsupported(task, "a run-time loop's item outside the loop's tasks' inputs", "input parameter %q (a condition on it, for one)", key)
	case in.collected != nil || in.collectedFrom != nil:
		return "", "", unsupported(task, "a loop's collected outputs outside a task's inputs", "input parameter %q (a condition on them, for one)", key)
	case in.TaskOutputParameter != nil:
		src := in.TaskOutputParameter
		if p := c.flat[src.ProducerTask]; p != nil && p.loop != nil {
			return "", "", unsupported(task, "data passed between the tasks of a loop over a run-time list", "input parameter %q from %q", key, src.ProducerTask)
		}
		if _, ok := c.taskNames[src.ProducerTask]; !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q: producer task %q is not in the DAG", task, key, src.ProducerTask)
		}
		r, ok := c.results[src.ProducerTask][src.OutputParameterKey]
		if !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q: task %q has no output parameter %q", task, key, src.ProducerTask, src.OutputParameterKey)
		}
		return "$(tasks." + c.taskNames[src.ProducerTask] + ".results." + r + ")", src.ProducerTask, nil
	case len(in.TaskFinalStatus) > 0:
		return c.finalStatus(in.TaskFinalStatus), "", nil
	default:
		return "", "", unsupported(task, "parameter expression selector", "input parameter %q", key)
	}
}

// computeResources maps the executor's resources; accelerators are refused.
func computeResources(task string, r *Resources) (corev1.ResourceRequirements, error) {
	var req corev1.ResourceRequirements
	if r == nil {
		return req, nil
	}
	if len(r.Accelerator) > 0 && !isEmptyJSON(r.Accelerator) {
		name, count, err := accelerator(task, r.Accelerator)
		if err != nil {
			return req, err
		}
		req.Limits = corev1.ResourceList{name: count}
	}
	set := func(list *corev1.ResourceList, name corev1.ResourceName, text string, number float64, unit string) error {
		var q resource.Quantity
		switch {
		case text != "":
			if strings.Contains(text, "{{") {
				return unsupported(task, "resource from a pipeline parameter", "%s %s", name, text)
			}
			parsed, err := resource.ParseQuantity(text)
			if err != nil {
				return fmt.Errorf("task %q: resource %s %q: %w", task, name, text, err)
			}
			q = parsed
		case number > 0:
			parsed, err := resource.ParseQuantity(strconv.FormatFloat(number, 'f', -1, 64) + unit)
			if err != nil {
				return fmt.Errorf("task %q: resource %s %v: %w", task, name, number, err)
			}
			q = parsed
		default:
			return nil
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
		return nil
	}
	for _, s := range []error{
		set(&req.Limits, corev1.ResourceCPU, r.ResourceCPULimit, r.CPULimit, ""),
		set(&req.Requests, corev1.ResourceCPU, r.ResourceCPURequest, r.CPURequest, ""),
		set(&req.Limits, corev1.ResourceMemory, r.ResourceMemoryLimit, r.MemoryLimit, "G"),
		set(&req.Requests, corev1.ResourceMemory, r.ResourceMemoryRequest, r.MemoryRequest, "G"),
	} {
		if s != nil {
			return req, s
		}
	}
	return req, nil
}

// accelerator is resources.accelerator as a limit, as KFP's own backend
// sets it: the type is the resource's name (an extended resource such as
// nvidia.com/gpu), the count its quantity.
func accelerator(task string, raw json.RawMessage) (corev1.ResourceName, resource.Quantity, error) {
	var a struct {
		Type, ResourceType string
		Count              json.Number
		ResourceCount      string
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", resource.Quantity{}, fmt.Errorf("task %q: resources.accelerator: %w", task, err)
	}
	typ := firstNonEmpty(a.ResourceType, a.Type)
	count := firstNonEmpty(a.ResourceCount, a.Count.String())
	if strings.Contains(typ+count, "{{") {
		return "", resource.Quantity{}, unsupported(task, "resource from a pipeline parameter", "accelerator %s %s", typ, count)
	}
	if !strings.Contains(typ, "/") || len(validation.IsQualifiedName(typ)) > 0 {
		return "", resource.Quantity{}, unsupported(task, "accelerator type "+typ, "not a Kubernetes extended resource name (such as nvidia.com/gpu)")
	}
	q, err := resource.ParseQuantity(firstNonEmpty(count, "1"))
	if err != nil {
		return "", resource.Quantity{}, fmt.Errorf("task %q: accelerator count %q: %w", task, count, err)
	}
	return corev1.ResourceName(typ), q, nil
}

func (c *compiler) pipelineResults() ([]tektonv1.PipelineResult, error) {
	outs := c.spec.Root.DAG.Outputs
	if outs == nil {
		return nil, nil
	}
	// An output artifact of the pipeline is its producer's, which the
	// outputs annotation already lists: it must exist.
	for _, key := range sortedKeys(outs.Artifacts) {
		var sel struct {
			ArtifactSelectors []struct {
				ProducerSubtask   string `json:"producerSubtask"`
				OutputArtifactKey string `json:"outputArtifactKey"`
			} `json:"artifactSelectors"`
		}
		if err := json.Unmarshal(outs.Artifacts[key], &sel); err != nil || len(sel.ArtifactSelectors) != 1 {
			return nil, unsupported("", "pipeline output artifact from dsl.OneOf", "output %q", key)
		}
		src := sel.ArtifactSelectors[0]
		a, err := c.flattener.resolveArtifact("", key, src.ProducerSubtask, src.OutputArtifactKey)
		if err != nil {
			return nil, fmt.Errorf("pipeline output artifact %q: %w", key, err)
		}
		from := a.TaskOutputArtifact
		if _, ok := c.artifacts[from.ProducerTask][from.OutputArtifactKey]; !ok {
			return nil, fmt.Errorf("pipeline output artifact %q: task %q has no output artifact %q", key, from.ProducerTask, from.OutputArtifactKey)
		}
	}
	names, err := resultNames.assign(sortedKeys(outs.Parameters))
	if err != nil {
		return nil, err
	}
	var results []tektonv1.PipelineResult
	for _, key := range sortedKeys(outs.Parameters) {
		o := outs.Parameters[key]
		if len(o.ValueFromOneof) > 0 {
			return nil, unsupported("", "pipeline output from dsl.OneOf", "output %q", key)
		}
		if o.ValueFromParameter == nil {
			return nil, fmt.Errorf("pipeline output %q has no source", key)
		}
		in, err := c.flattener.resolveOutput("", o.ValueFromParameter.ProducerSubtask, o.ValueFromParameter.OutputParameterKey)
		if err != nil {
			return nil, fmt.Errorf("pipeline output %q: %w", key, err)
		}
		src := in.TaskOutputParameter
		if src == nil {
			return nil, unsupported("", "pipeline output collected from a loop", "output %q", key)
		}
		if c.flat[src.ProducerTask].final {
			return nil, unsupported("", "pipeline output from an exit task or ignore_upstream_failure task", "output %q: Tekton's Pipeline results cannot read finally tasks", key)
		}
		r, ok := c.results[src.ProducerTask][src.OutputParameterKey]
		if !ok {
			return nil, fmt.Errorf("pipeline output %q: task %q has no output parameter %q", key, src.ProducerTask, src.OutputParameterKey)
		}
		results = append(results, tektonv1.PipelineResult{
			Name: names[key], Type: tektonv1.ResultsTypeString,
			Value: *tektonv1.NewStructuredValues("$(tasks." + c.taskNames[src.ProducerTask] + ".results." + r + ")"),
		})
	}
	return results, nil
}

func isEmptyJSON(raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, inner := range x {
			b, _ := json.Marshal(inner)
			if !isEmptyJSON(b) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
