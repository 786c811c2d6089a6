// Package generator builds Tekton PipelineRuns with an embedded pipelineSpec,
// validated as Tekton's admission webhook would. It is pure: no API server
// calls. The operator's controllers build their runs with it; prgen, which
// does not link Tekton, has its printed runs checked by Validate in tests.
package generator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"github.com/tektoncd/pipeline/pkg/apis/validate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run describes one PipelineRun to build.
type Run struct {
	// Namespace the PipelineRun is created in; empty leaves it to the client.
	Namespace string
	// Name is a deterministic name (controllers). Exactly one of Name and
	// GenerateName is set.
	Name string
	// GenerateName is a prefix the API server completes (kubectl create).
	GenerateName string

	Labels      map[string]string
	Annotations map[string]string

	// ServiceAccountName every TaskRun of the run uses.
	ServiceAccountName string

	// Params give values to the shape's params, by name.
	Params tektonv1.Params
	// Workspaces bind the shape's workspaces.
	Workspaces []tektonv1.WorkspaceBinding
	// TaskRunSpecs override the service account and pod template of
	// single tasks of the shape.
	TaskRunSpecs []tektonv1.PipelineTaskRunSpec
	// Timeout of the whole run; Tekton's default when nil.
	Timeout *metav1.Duration
}

// StringParam is a string-valued param.
func StringParam(name, value string) tektonv1.Param {
	return tektonv1.Param{Name: name, Value: tektonv1.ParamValue{Type: tektonv1.ParamTypeString, StringVal: value}}
}

// Build returns the PipelineRun embedding shape for r, or an error naming
// what is wrong. A returned PipelineRun has passed Tekton's own validation.
// To build many runs of one shape, use a Builder.
func Build(ctx context.Context, shape *tektonv1.PipelineSpec, r Run) (*tektonv1.PipelineRun, error) {
	return NewBuilder(shape).Build(ctx, r)
}

// Builder builds runs of one pipeline shape. It keeps a private copy of the
// shape, so it can remember which runs Tekton's validation accepted: runs
// that differ only in metadata and in plain string param values validate
// alike (see validationKey), and Tekton's validator, which compiles regular
// expressions on every call, then runs once per kind of run rather than once
// per run. Safe for concurrent use. A Builder assumes every call's context
// carries the same Tekton configuration (feature flags).
type Builder struct {
	shape *tektonv1.PipelineSpec

	mu       sync.Mutex
	verdicts map[string]error
}

// maxVerdicts bounds the validation verdicts a Builder remembers.
const maxVerdicts = 1024

// NewBuilder copies shape; later changes to shape do not affect the Builder.
func NewBuilder(shape *tektonv1.PipelineSpec) *Builder {
	return &Builder{shape: shape.DeepCopy(), verdicts: map[string]error{}}
}

// Build returns the PipelineRun for r, or an error naming what is wrong. A
// returned PipelineRun passes Tekton's own validation.
func (b *Builder) Build(ctx context.Context, r Run) (*tektonv1.PipelineRun, error) {
	if err := checkInput(b.shape, r); err != nil {
		return nil, err
	}
	pr := &tektonv1.PipelineRun{
		TypeMeta: metav1.TypeMeta{APIVersion: tektonv1.SchemeGroupVersion.String(), Kind: "PipelineRun"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    r.Namespace,
			Name:         r.Name,
			GenerateName: r.GenerateName,
			Labels:       r.Labels,
			Annotations:  r.Annotations,
		},
		Spec: tektonv1.PipelineRunSpec{
			PipelineSpec: b.shape.DeepCopy(),
			Params:       orderedParams(b.shape.Params, r.Params),
			Workspaces:   r.Workspaces,
			TaskRunSpecs: r.TaskRunSpecs,
		},
	}
	if r.ServiceAccountName != "" {
		pr.Spec.TaskRunTemplate.ServiceAccountName = r.ServiceAccountName
	}
	if r.Timeout != nil {
		pr.Spec.Timeouts = &tektonv1.TimeoutFields{Pipeline: r.Timeout}
	}
	if err := b.validate(ctx, pr); err != nil {
		return nil, err
	}
	return pr, nil
}

func (b *Builder) validate(ctx context.Context, pr *tektonv1.PipelineRun) error {
	key := validationKey(pr)
	b.mu.Lock()
	verdict, known := b.verdicts[key]
	b.mu.Unlock()
	if !known {
		verdict = Validate(ctx, pr)
		b.mu.Lock()
		if len(b.verdicts) >= maxVerdicts {
			// Values with a "$" are keyed verbatim: forget rather than grow
			// without bound. A forgotten verdict is only worked out again.
			clear(b.verdicts)
		}
		b.verdicts[key] = verdict
		b.mu.Unlock()
		return verdict
	}
	if verdict != nil {
		return verdict
	}
	// The spec is known valid; the name is this run's own.
	if err := validate.ObjectMetadata(previewMeta(pr)); err != nil {
		return fmt.Errorf("invalid PipelineRun %s: %w", displayName(pr), err.ViaField("metadata"))
	}
	return nil
}

// validationKey identifies the class of runs Tekton's validation treats
// alike. Tekton's PipelineRun validation reads the metadata only for the name
// (checked per run) and reads a string param value only for the variable
// expressions in it; so every string value without a "$" is one class, and
// values with one are kept verbatim. Everything else that validation reads
// (param names and types, array and object values, workspace bindings,
// task run specs, timeouts) is part of the key; the embedded spec is the Builder's own.
func validationKey(pr *tektonv1.PipelineRun) string {
	var k strings.Builder
	for _, p := range pr.Spec.Params {
		k.WriteString(p.Name)
		k.WriteByte(0)
		k.WriteString(string(p.Value.Type))
		k.WriteByte(0)
		switch {
		case p.Value.Type == tektonv1.ParamTypeString && !strings.Contains(p.Value.StringVal, "$"):
		case p.Value.Type == tektonv1.ParamTypeString:
			k.WriteString(p.Value.StringVal)
		default:
			data, _ := json.Marshal(p.Value)
			k.Write(data)
		}
		k.WriteByte(1)
	}
	for _, w := range pr.Spec.Workspaces {
		fmt.Fprintf(&k, "%s\x00%t%t%t%t%t%t%t%t\x01", w.Name, w.EmptyDir != nil, w.PersistentVolumeClaim != nil,
			w.VolumeClaimTemplate != nil, w.ConfigMap != nil, w.Secret != nil, w.Projected != nil, w.CSI != nil, w.SubPath != "")
	}
	for _, t := range pr.Spec.TaskRunSpecs {
		data, _ := json.Marshal(t)
		k.Write(data)
		k.WriteByte(1)
	}
	if t := pr.Spec.Timeouts; t != nil {
		fmt.Fprintf(&k, "%v/%v/%v", t.Pipeline, t.Tasks, t.Finally)
	}
	return k.String()
}

// previewMeta is pr's metadata with generateName completed as the API server would, at
// the longest length it can produce.
func previewMeta(pr *tektonv1.PipelineRun) metav1.Object {
	if pr.Name == "" && pr.GenerateName != "" {
		return &metav1.ObjectMeta{Name: pr.GenerateName + "xxxxx"}
	}
	return pr
}

// Validate runs Tekton's own PipelineRun validation, as its admission webhook
// would. A run with only generateName is checked under a provisional name of
// the longest length the API server can generate.
func Validate(ctx context.Context, pr *tektonv1.PipelineRun) error {
	if pr.Name == "" && pr.GenerateName != "" {
		named := *pr
		named.Name = pr.GenerateName + "xxxxx"
		pr = &named
	}
	if err := pr.Validate(ctx); err != nil {
		return fmt.Errorf("invalid PipelineRun %s: %w", displayName(pr), err)
	}
	return nil
}

func checkInput(shape *tektonv1.PipelineSpec, r Run) error {
	var errs []error
	if (r.Name == "") == (r.GenerateName == "") {
		errs = append(errs, errors.New("exactly one of Name and GenerateName must be set"))
	}
	if shape == nil {
		return errors.Join(append(errs, errors.New("pipeline shape is missing"))...)
	}
	declared := make(map[string]bool, len(shape.Params))
	for _, p := range shape.Params {
		declared[p.Name] = true
	}
	given := make(map[string]bool, len(r.Params))
	for _, p := range r.Params {
		switch {
		case !declared[p.Name]:
			errs = append(errs, fmt.Errorf("param %q is not declared by the pipeline (declared: %s)", p.Name, paramNames(shape.Params)))
		case given[p.Name]:
			errs = append(errs, fmt.Errorf("param %q is given twice", p.Name))
		}
		given[p.Name] = true
	}
	for _, p := range shape.Params {
		if p.Default == nil && !given[p.Name] {
			errs = append(errs, fmt.Errorf("param %q has no default and no value", p.Name))
		}
	}
	return errors.Join(errs...)
}

// orderedParams puts params in the shape's declaration order, so output is
// stable whatever order the caller built them in.
func orderedParams(specs tektonv1.ParamSpecs, params tektonv1.Params) tektonv1.Params {
	index := make(map[string]int, len(specs))
	for i, s := range specs {
		index[s.Name] = i
	}
	out := slices.Clone(params)
	slices.SortStableFunc(out, func(a, b tektonv1.Param) int { return index[a.Name] - index[b.Name] })
	return out
}

func paramNames(specs tektonv1.ParamSpecs) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func displayName(pr *tektonv1.PipelineRun) string {
	name := pr.Name
	if name == "" {
		name = pr.GenerateName
	}
	if pr.Namespace != "" {
		return pr.Namespace + "/" + name
	}
	return name
}
