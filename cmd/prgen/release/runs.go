package release

import (
	"context"
	"fmt"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
)

// Labels every generated run carries; --selector matches them.
const (
	LabelApp     = "app"
	LabelVersion = "version"
	LabelType    = "type"
	TypeRun      = "run"
)

// Params of the release shape (pipelines/release.yaml).
const (
	ParamApp             = "app"
	ParamVersion         = "version"
	ParamGitURL          = "git-url"
	ParamGitRevision     = "git-revision"
	ParamContext         = "context"
	ParamDockerfile      = "dockerfile"
	ParamImage           = "image"
	ParamManifestsURL    = "manifests-url"
	ParamManifestsBranch = "manifests-branch"
	ParamManifestsPath   = "manifests-path"
	ParamBuilderImage    = "builder-image"
	ParamGitImage        = "git-image"

	WorkspaceGitCredentials = "git-credentials"
	WorkspaceDockerConfig   = "docker-config"
)

// Options select and place the runs.
type Options struct {
	// Namespace overrides the matrix's namespace.
	Namespace string
	// Selector picks (application, version) pairs by their run labels; nil
	// selects all.
	Selector labels.Selector
	// ResolveImage, when set, pins the tool images the runs name (e.g. to
	// digests); nil leaves them as written.
	ResolveImage func(ctx context.Context, image string) (string, error)
}

// Pair is one application at one version.
type Pair struct {
	App     Application
	Version Version
}

// Labels are the labels of the pair's run.
func (p Pair) Labels() labels.Set {
	return labels.Set{
		LabelApp:                       p.App.Name,
		LabelVersion:                   p.Version.Name,
		LabelType:                      TypeRun,
		"app.kubernetes.io/name":       p.App.Name,
		"app.kubernetes.io/version":    p.Version.Name,
		"app.kubernetes.io/component":  "release",
		"app.kubernetes.io/managed-by": "prgen",
		// Groups every run of one pair under one name in `tkn pipelinerun list`.
		"tekton.dev/pipeline": naming.LabelValue(p.App.Name, p.Version.Name),
	}
}

// Select returns the pairs the selector matches, applications in file order,
// each with its versions in file order. A selector that matches nothing is an
// error: a release engineer's typo must not pass as "nothing to do".
func (m *Matrix) Select(selector labels.Selector) ([]Pair, error) {
	var out []Pair
	for _, a := range m.Applications {
		for _, v := range m.Versions {
			p := Pair{App: a, Version: v}
			if selector == nil || selector.Matches(p.Labels()) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %q matches no (application, version) pair in %s", selector, m.file)
	}
	return out, nil
}

// Runs builds one PipelineRun per selected pair, in Select's order. The runs
// share one pipelineSpec: print them, do not modify them.
func (m *Matrix) Runs(ctx context.Context, opts Options) ([]*tektonv1.PipelineRun, error) {
	shape, err := pipelines.Get(pipelines.Release)
	if err != nil {
		return nil, err
	}
	pairs, err := m.Select(opts.Selector)
	if err != nil {
		return nil, err
	}
	namespace := m.Namespace
	if opts.Namespace != "" {
		namespace = opts.Namespace
	}
	tools := m.effectiveTools(shape)
	if opts.ResolveImage != nil {
		if tools, err = resolveTools(ctx, tools, opts.ResolveImage); err != nil {
			return nil, err
		}
	}
	workspaces := m.workspaces()
	builder := generator.NewBuilder(shape)
	builder.ShareSpec = true // runs are only printed
	runs := make([]*tektonv1.PipelineRun, len(pairs))
	build := func(lo, hi int) (struct{}, error) {
		for i := lo; i < hi; i++ {
			p := pairs[i]
			pr, err := builder.Build(ctx, generator.Run{
				Namespace:          namespace,
				GenerateName:       naming.GenerateNamePrefix(p.App.Name, p.Version.Name),
				Labels:             p.Labels(),
				ServiceAccountName: m.ServiceAccount,
				Params:             m.params(p, tools),
				Workspaces:         workspaces,
			})
			if err != nil {
				return struct{}{}, fmt.Errorf("application %q version %q: %w", p.App.Name, p.Version.Name, err)
			}
			runs[i] = pr
		}
		return struct{}{}, nil
	}
	// The Builder is safe for concurrent use; errors come in pair order, so
	// the one reported is the one a sequential loop would meet first.
	if err := inOrder(len(pairs), runsPerChunk, workers(), build, func(struct{}) error { return nil }); err != nil {
		return nil, err
	}
	return runs, nil
}

// runsPerChunk is how many runs a worker builds or prints at a time: enough
// to make the hand-over negligible, few enough to share 1,000 runs well.
const runsPerChunk = 128

func (m *Matrix) params(p Pair, tools Tools) tektonv1.Params {
	params := tektonv1.Params{
		generator.StringParam(ParamApp, p.App.Name),
		generator.StringParam(ParamVersion, p.Version.Name),
		generator.StringParam(ParamGitURL, p.App.Repo),
		generator.StringParam(ParamGitRevision, p.Version.Revision),
		generator.StringParam(ParamImage, p.App.Image+":"+p.Version.Name),
		generator.StringParam(ParamManifestsURL, m.ManifestsRepo),
		generator.StringParam(ParamManifestsBranch, p.Version.ManifestsBranch),
		generator.StringParam(ParamManifestsPath, p.App.Manifests),
		generator.StringParam(ParamBuilderImage, tools.Builder),
		generator.StringParam(ParamGitImage, tools.Git),
	}
	if p.App.Context != "" {
		params = append(params, generator.StringParam(ParamContext, p.App.Context))
	}
	if p.App.Dockerfile != "" {
		params = append(params, generator.StringParam(ParamDockerfile, p.App.Dockerfile))
	}
	return params
}

// effectiveTools fills unset tool images from the shape's defaults, so every
// run names its images explicitly and --resolve-digests can pin them.
func (m *Matrix) effectiveTools(shape *tektonv1.PipelineSpec) Tools {
	t := m.Tools
	for _, p := range shape.Params {
		if p.Default == nil {
			continue
		}
		switch {
		case p.Name == ParamBuilderImage && t.Builder == "":
			t.Builder = p.Default.StringVal
		case p.Name == ParamGitImage && t.Git == "":
			t.Git = p.Default.StringVal
		}
	}
	return t
}

func (m *Matrix) workspaces() []tektonv1.WorkspaceBinding {
	var ws []tektonv1.WorkspaceBinding
	if m.Credentials.Git != "" {
		ws = append(ws, secretWorkspace(WorkspaceGitCredentials, m.Credentials.Git))
	}
	if m.Credentials.Registry != "" {
		ws = append(ws, secretWorkspace(WorkspaceDockerConfig, m.Credentials.Registry))
	}
	return ws
}

func secretWorkspace(name, secret string) tektonv1.WorkspaceBinding {
	return tektonv1.WorkspaceBinding{Name: name, Secret: &corev1.SecretVolumeSource{SecretName: secret}}
}

// resolveTools pins each tool image, stopping as soon as ctx is done (e.g.
// Ctrl-C while a registry does not answer) with an error that says so rather
// than the transport's.
func resolveTools(ctx context.Context, t Tools, resolve func(context.Context, string) (string, error)) (Tools, error) {
	for _, tool := range []struct {
		field string
		image *string
	}{{"tools.builder", &t.Builder}, {"tools.git", &t.Git}} {
		if ctx.Err() != nil {
			return t, fmt.Errorf("%s: stopped before resolving %q: %w", tool.field, *tool.image, context.Cause(ctx))
		}
		pinned, err := resolve(ctx, *tool.image)
		if err != nil {
			if ctx.Err() != nil {
				return t, fmt.Errorf("%s: stopped while resolving %q: %w", tool.field, *tool.image, context.Cause(ctx))
			}
			return t, fmt.Errorf("%s: %w", tool.field, err)
		}
		*tool.image = pinned
	}
	return t, nil
}
