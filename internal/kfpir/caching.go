package kfpir

import (
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Caching, as KFP's. A task with cachingOptions.enableCache runs under the
// launcher, which computes the execution's fingerprint (the component and
// its inputs, input artifacts by content: launcher.Fingerprint), reuses
// the outputs of a finished execution with the same fingerprint instead
// of running, and stores its own when it finishes. The cache lives on
// the artifacts workspace, in CacheDir under the pipeline root: with a
// volume the namespace's runs share (the Tekton provider's artifactsClaim)
// it serves every later run of the namespace, and no other namespace's.
// A task's result CachedResult says whether it was reused ("true") or
// ran ("false"). A run turns caching off with the Pipeline param
// CachingParam set to "false": every task runs, and nothing is stored.
// Without a workspace that outlives the run (Options.Caching false) the
// tasks run every time and the Pipeline's AnnotationCaching says so.
const (
	// CacheDir is the cache's directory under the pipeline root (under
	// CacheMount with an object-store root).
	CacheDir = ".kfp-cache"
	// CacheMount is where a caching task of an object-store root mounts
	// the artifacts workspace, which then holds only the cache.
	CacheMount = "/kfp-cache"
	// CachingParam is the Pipeline param switching caching for a run.
	CachingParam = "kfp-enable-caching"
	// CachedResult is a caching task's result: true when reused.
	CachedResult = "kfp-cached"
)

// caching says tasks may keep and reuse their executions: the run's
// artifacts volume outlives it. With an object-store root, the volume
// holds only the cache, mounted at CacheMount in the tasks that cache:
// a hit restores the outputs locally, and the store step uploads them
// as this run's.
func (c *compiler) caching() bool { return c.opts.Caching }

// cacheDir is where the cache is in a task's file system.
func (c *compiler) cacheDir() string {
	if c.store != nil {
		return CacheMount + "/" + CacheDir
	}
	return c.rootPath + "/" + CacheDir
}

// cached makes a launched task keep and reuse its executions.
func (c *compiler) cached(pt *tektonv1.PipelineTask, ts *tektonv1.TaskSpec, lt *launchedTask, name string, local map[string]string) error {
	for key, l := range local {
		if l == CachingParam {
			return unsupported(name, "input named "+CachingParam, "input parameter %q: the name switches caching", key)
		}
	}
	for key, r := range c.results[name] {
		if r == CachedResult {
			return unsupported(name, "output named "+CachedResult, "output parameter %q: the name says whether the task was cached", key)
		}
	}
	ts.Params = append(ts.Params, tektonv1.ParamSpec{Name: CachingParam, Type: tektonv1.ParamTypeString,
		Description: "false: run, and store nothing in the cache"})
	pt.Params = append(pt.Params, tektonv1.Param{Name: CachingParam, Value: *tektonv1.NewStructuredValues("$(params." + CachingParam + ")")})
	ts.Results = append(ts.Results, tektonv1.TaskResult{Name: CachedResult, Type: tektonv1.ResultsTypeString,
		Description: "true when the outputs of an earlier execution were reused"})
	if c.store != nil {
		ts.Workspaces = append(ts.Workspaces, tektonv1.WorkspaceDeclaration{Name: ArtifactsWorkspace, MountPath: CacheMount})
		pt.Workspaces = append(pt.Workspaces, tektonv1.WorkspacePipelineTaskBinding{Name: ArtifactsWorkspace, Workspace: ArtifactsWorkspace})
	}
	lt.cache = true
	c.caches = true
	return nil
}

// cachingParam declares CachingParam when a task caches, and says on the
// Pipeline when tasks asked for caching and cannot have it.
func (c *compiler) cachingParam(p *tektonv1.Pipeline) error {
	if c.caches {
		for _, name := range c.params {
			if name == CachingParam {
				return unsupported("", "pipeline input named "+CachingParam, "the name switches caching")
			}
		}
		p.Spec.Params = append(p.Spec.Params, tektonv1.ParamSpec{Name: CachingParam, Type: tektonv1.ParamTypeString,
			Description: "KFP's caching for this run: true (reuse and store executions) or false (every task runs)",
			Default:     tektonv1.NewStructuredValues("true")})
		where := c.rootURI + "/" + CacheDir
		if c.store != nil {
			where = "the artifacts volume's " + CacheDir + " (artifacts in " + c.rootURI + ")"
			p.Spec.Workspaces = append(p.Spec.Workspaces, tektonv1.PipelineWorkspaceDeclaration{Name: ArtifactsWorkspace, Description: "KFP's cache"})
		}
		setAnnotation(p, contract.AnnotationCaching, "on: tasks asking for caching reuse executions from "+where)
		return nil
	}
	var asking []string
	for _, name := range sortedKeys(c.flat) {
		if o := c.flat[name].CachingOptions; o != nil && o.EnableCache {
			asking = append(asking, name)
		}
	}
	if len(asking) > 0 {
		setAnnotation(p, contract.AnnotationCaching, "off: the artifacts volume does not outlive the run, so "+
			strings.Join(asking, ", ")+" run every time")
	}
	return nil
}

func setAnnotation(p *tektonv1.Pipeline, key, value string) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[key] = value
}
