package release

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
)

// Labels every generated run carries; --selector matches them.
const (
	LabelApp     = "app"
	LabelVersion = "version"
	LabelType    = "type"
	TypeRun      = "run"
)

// Params of the release shape (pipelines/shapes/release.yaml).
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

// Run is one release PipelineRun (tekton.dev/v1), as Write prints it: the
// release shape embedded as its pipelineSpec, with this run's metadata,
// params, service account and workspaces.
type Run struct {
	Namespace    string
	GenerateName string
	Labels       Labels
	// Params are in the shape's declaration order.
	Params             []Param
	ServiceAccountName string
	Workspaces         []Workspace

	// shape is shared by every run of a matrix.
	shape *shape
}

// Param is a string param of a run.
type Param struct{ Name, Value string }

// Workspace binds one of the shape's workspaces to a Secret.
type Workspace struct{ Name, Secret string }

// Pair is one application at one version.
type Pair struct {
	App     Application
	Version Version
}

// Labels are the labels of the pair's run, sorted by key (as they are
// printed).
func (p Pair) Labels() Labels {
	// Keys in sorted order; TestPairLabelsAreSortedAndUnique checks it.
	return Labels{
		{LabelApp, p.App.Name},
		{"app.kubernetes.io/component", "release"},
		{"app.kubernetes.io/managed-by", "prgen"},
		{"app.kubernetes.io/name", p.App.Name},
		{"app.kubernetes.io/version", p.Version.Name},
		// Groups every run of one pair under one name in `tkn pipelinerun list`.
		{"tekton.dev/pipeline", naming.LabelValue(p.App.Name, p.Version.Name)},
		{LabelType, TypeRun},
		{LabelVersion, p.Version.Name},
	}
}

// Labels of a run, sorted by key, unique. A slice rather than a map: a
// release builds one per run, and they are only matched and printed.
type Labels []Label

// Label is one key and value.
type Label struct{ Key, Value string }

// Has reports whether key is set; with Get and Lookup, Labels is a
// labels.Labels, so selectors match it.
func (l Labels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

// Get is key's value, "" when unset.
func (l Labels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

// Lookup is key's value and whether it is set.
func (l Labels) Lookup(key string) (string, bool) {
	for _, kv := range l {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Select returns the pairs the selector matches, applications in file order,
// each with its versions in file order. A selector that matches nothing is an
// error: a release engineer's typo must not pass as "nothing to do".
func (m *Matrix) Select(selector labels.Selector) ([]Pair, error) {
	everything := selector == nil || selector.Empty()
	out := make([]Pair, 0, len(m.Applications)*len(m.Versions))
	for _, a := range m.Applications {
		for _, v := range m.Versions {
			p := Pair{App: a, Version: v}
			if everything || selector.Matches(p.Labels()) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %q matches no (application, version) pair in %s", selector, m.file)
	}
	return out, nil
}

// Runs builds one PipelineRun per selected pair, in Select's order, each
// checked as Tekton's validation would check what differs between runs (see
// check); the shape they share is valid as written.
func (m *Matrix) Runs(ctx context.Context, opts Options) ([]*Run, error) {
	shape, err := loadReleaseShape()
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
	runs := make([]*Run, len(pairs))
	build := func(lo, hi int) (struct{}, error) {
		for i := lo; i < hi; i++ {
			p := pairs[i]
			r := &Run{
				Namespace:          namespace,
				GenerateName:       naming.GenerateNamePrefix(p.App.Name, p.Version.Name),
				Labels:             p.Labels(),
				Params:             m.params(shape, p, tools),
				ServiceAccountName: m.ServiceAccount,
				Workspaces:         workspaces,
				shape:              shape,
			}
			if err := shape.check(r); err != nil {
				return struct{}{}, fmt.Errorf("application %q version %q: %w", p.App.Name, p.Version.Name, err)
			}
			runs[i] = r
		}
		return struct{}{}, nil
	}
	// Errors come in pair order, so the one reported is the one a
	// sequential loop would meet first.
	if err := inOrder(len(pairs), runsPerChunk, workers(), build, func(struct{}) error { return nil }); err != nil {
		return nil, err
	}
	return runs, nil
}

// check refuses a run Tekton's PipelineRun validation would refuse, for
// what can differ between runs of the one shape: the name (completed from
// generateName at the longest length the API server gives) and a param
// without a default that has no value. Params are built from the shape's
// own list (so none is undeclared or given twice); their values are strings
// without "$(" (Parse refuses them), which Tekton's validation does not
// read; the workspace bindings name Secrets Parse requires to be non-empty.
// FuzzRunsPassTektonValidation holds check to Tekton's own verdicts.
func (s *shape) check(r *Run) error {
	var errs []error
	name := r.GenerateName + "xxxxx"
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || len(name) > validation.DNS1123LabelMaxLength {
		errs = append(errs, fmt.Errorf("invalid resource name %q: must be a valid DNS label of at most %d characters: metadata.name",
			name, validation.DNS1123LabelMaxLength))
	}
	given := 0 // r.Params are in the shape's order: walk both at once
	for _, p := range s.params {
		if given < len(r.Params) && r.Params[given].Name == p.name {
			given++
		} else if !p.hasDefault {
			errs = append(errs, fmt.Errorf("param %q has no default and no value", p.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid PipelineRun %s: %w", r.displayName(), err)
	}
	return nil
}

func (r *Run) displayName() string {
	if r.Namespace != "" {
		return r.Namespace + "/" + r.GenerateName
	}
	return r.GenerateName
}

// runsPerChunk is how many runs a worker builds or prints at a time: enough
// to make the hand-over negligible, few enough to share 1,000 runs well.
const runsPerChunk = 128

// params are the pair's params in the shape's declaration order; context and
// dockerfile only when the application sets them (the shape's defaults
// apply otherwise).
func (m *Matrix) params(s *shape, p Pair, tools Tools) []Param {
	params := make([]Param, 0, len(s.params))
	for i, sp := range s.params {
		if value := s.values[i]; value != nil {
			if v := value(m, p, tools); v != "" {
				params = append(params, Param{sp.name, v})
			}
		}
	}
	return params
}

// paramValue is a param's value for a pair, "" for none.
type paramValue func(m *Matrix, p Pair, tools Tools) string

// releaseParams are the params prgen gives values to, by name; the shape
// must declare each (loadReleaseShape checks), or a value would silently go
// nowhere.
var releaseParams = map[string]paramValue{
	ParamApp:             func(_ *Matrix, p Pair, _ Tools) string { return p.App.Name },
	ParamVersion:         func(_ *Matrix, p Pair, _ Tools) string { return p.Version.Name },
	ParamGitURL:          func(_ *Matrix, p Pair, _ Tools) string { return p.App.Repo },
	ParamGitRevision:     func(_ *Matrix, p Pair, _ Tools) string { return p.Version.Revision },
	ParamContext:         func(_ *Matrix, p Pair, _ Tools) string { return p.App.Context },
	ParamDockerfile:      func(_ *Matrix, p Pair, _ Tools) string { return p.App.Dockerfile },
	ParamImage:           func(_ *Matrix, p Pair, _ Tools) string { return p.App.Image + ":" + p.Version.Name },
	ParamManifestsURL:    func(m *Matrix, _ Pair, _ Tools) string { return m.ManifestsRepo },
	ParamManifestsBranch: func(_ *Matrix, p Pair, _ Tools) string { return p.Version.ManifestsBranch },
	ParamManifestsPath:   func(_ *Matrix, p Pair, _ Tools) string { return p.App.Manifests },
	ParamBuilderImage:    func(_ *Matrix, _ Pair, t Tools) string { return t.Builder },
	ParamGitImage:        func(_ *Matrix, _ Pair, t Tools) string { return t.Git },
}

// effectiveTools fills unset tool images from the shape's defaults, so every
// run names its images explicitly and --resolve-digests can pin them.
func (m *Matrix) effectiveTools(s *shape) Tools {
	t := m.Tools
	if t.Builder == "" {
		t.Builder = s.defaultOf(ParamBuilderImage)
	}
	if t.Git == "" {
		t.Git = s.defaultOf(ParamGitImage)
	}
	return t
}

func (m *Matrix) workspaces() []Workspace {
	var ws []Workspace
	if m.Credentials.Git != "" {
		ws = append(ws, Workspace{WorkspaceGitCredentials, m.Credentials.Git})
	}
	if m.Credentials.Registry != "" {
		ws = append(ws, Workspace{WorkspaceDockerConfig, m.Credentials.Registry})
	}
	return ws
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
