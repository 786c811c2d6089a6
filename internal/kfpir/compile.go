package kfpir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
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
	// PipelineRoot is where artifacts are stored: a file:// root with an
	// absolute path (the mount path of the ArtifactsWorkspace in every
	// task), or an s3:// or minio:// root with ObjectStore (objects.go).
	// Empty: the IR's defaultPipelineRoot when it is a file:// root, else
	// DefaultPipelineRoot (as a KFP run's pipeline root overrides the
	// IR's, the caller's root overrides any other IR root).
	PipelineRoot string
	// ObjectStore is how tasks reach an object-store PipelineRoot.
	ObjectStore *ObjectStore
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
	rootPath  string              // absolute path of the pipeline root, the workspace mount path
	rootURI   string              // the pipeline root without a trailing slash
	store     *objectstore.Object // the root, when it is in an object store
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
	pvcTasks     []string // tasks creating or deleting claims (pvc.go)
	// resourceParams are the tasks' resources from pipeline parameters.
	resourceParams []ResourceParam
	// importers are the importer tasks' artifacts (importer.go).
	importers map[string]*importer
	// reported are the output artifacts taken in artifact lists, by
	// producer (collected.go).
	reported map[string]map[string]bool
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
		},
	}
	if c.store == nil {
		p.Spec.Workspaces = []tektonv1.PipelineWorkspaceDeclaration{{Name: ArtifactsWorkspace, Description: "the pipeline root " + c.rootURI}}
	}
	var err error
	if p.Spec.Params, err = c.pipelineParams(); err != nil {
		return nil, err
	}
	if err := c.compileTasks(p); err != nil {
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

// compileTasks compiles the container tasks (importers make none), with
// the condition and items tasks they need, and the pipeline's results.
func (c *compiler) compileTasks(p *tektonv1.Pipeline) error {
	tasks := c.flat
	// Refuse unsupported features first, so they are reported before any
	// error they cause in the tasks that consume them.
	for _, name := range sortedKeys(tasks) {
		if c.importerExecutor(name) != nil {
			continue
		}
		ref := tasks[name].ComponentRef.Name
		if _, err := c.executor(name, ref, c.spec.Components[ref]); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(tasks) {
		if err := c.declareOutputs(name, tasks[name]); err != nil {
			return err
		}
	}
	// Importers after the outputs: their values may be tasks' results.
	c.importers = map[string]*importer{}
	for _, name := range sortedKeys(tasks) {
		imp, err := c.importerOf(name)
		if err != nil {
			return err
		}
		if imp != nil {
			c.importers[name] = imp
		}
	}
	if err := c.annotateOutputs(p); err != nil {
		return err
	}
	for _, name := range sortedKeys(tasks) {
		if c.importers[name] != nil || tasks[name].exitPipeline != "" {
			continue // no pod: its consumers take the URI; a step of an exit pipeline's task
		}
		pt, gates, err := c.task(name, tasks[name])
		if err != nil {
			return err
		}
		p.Spec.Tasks = append(p.Spec.Tasks, gates...)
		if tasks[name].final {
			p.Spec.Finally = append(p.Spec.Finally, pt)
		} else {
			p.Spec.Tasks = append(p.Spec.Tasks, pt)
		}
	}
	if err := c.exitPipelineTasks(p); err != nil {
		return err
	}
	for _, key := range sortedKeys(c.flattener.oneOfs) {
		pt, gates, err := c.oneOfTask(key)
		if err != nil {
			return err
		}
		p.Spec.Tasks = append(append(p.Spec.Tasks, gates...), pt)
	}
	var err error
	if p.Spec.Results, err = c.pipelineResults(); err != nil {
		return err
	}
	if err := c.cachingParam(p); err != nil {
		return err
	}
	if err := c.annotateResourceParams(p); err != nil {
		return err
	}
	if err := c.annotatePVCTasks(p); err != nil {
		return err
	}
	return c.annotateTaskRunSpecs(p)
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
	if objectstore.Supported(root) {
		return c.objectRoot(root)
	}
	u, err := url.Parse(root)
	if err != nil || u.Scheme != "file" || u.Host != "" || !path.IsAbs(u.Path) || u.RawQuery != "" {
		return unsupported("", "pipeline root "+root, "supported roots: file:///absolute/path (a workspace), s3://bucket/prefix and minio://bucket/prefix (an S3-compatible store)")
	}
	c.rootPath = path.Clean(u.Path)
	if c.rootPath == "/" {
		return unsupported("", "pipeline root "+root, "the root cannot be /")
	}
	c.rootURI = "file://" + c.rootPath
	return nil
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
