// Package generator builds Tekton PipelineRuns with an embedded pipelineSpec.
// It is pure: no API server calls. The operator's controllers (deterministic
// names) and prgen (generateName, for kubectl create) share it.
package generator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
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

	// Pipeline is the shape embedded as pipelineSpec; Build copies it, so one
	// shape serves any number of runs.
	Pipeline *tektonv1.PipelineSpec
	// Params give values to the shape's params, by name.
	Params tektonv1.Params
	// Workspaces bind the shape's workspaces.
	Workspaces []tektonv1.WorkspaceBinding
	// Timeout of the whole run; Tekton's default when nil.
	Timeout *metav1.Duration
}

// StringParam is a string-valued param.
func StringParam(name, value string) tektonv1.Param {
	return tektonv1.Param{Name: name, Value: tektonv1.ParamValue{Type: tektonv1.ParamTypeString, StringVal: value}}
}

// Build returns the PipelineRun for r, or an error naming what is wrong. A
// returned PipelineRun has passed Tekton's own validation.
func Build(ctx context.Context, r Run) (*tektonv1.PipelineRun, error) {
	if err := checkInput(r); err != nil {
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
			PipelineSpec: r.Pipeline.DeepCopy(),
			Params:       orderedParams(r.Pipeline.Params, r.Params),
			Workspaces:   r.Workspaces,
		},
	}
	if r.ServiceAccountName != "" {
		pr.Spec.TaskRunTemplate.ServiceAccountName = r.ServiceAccountName
	}
	if r.Timeout != nil {
		pr.Spec.Timeouts = &tektonv1.TimeoutFields{Pipeline: r.Timeout}
	}
	if err := Validate(ctx, pr); err != nil {
		return nil, err
	}
	return pr, nil
}

// Validate runs Tekton's own PipelineRun validation, as its admission webhook
// would. A run with only generateName is checked under a provisional name of
// the longest length the API server can generate.
func Validate(ctx context.Context, pr *tektonv1.PipelineRun) error {
	if pr.Name == "" && pr.GenerateName != "" {
		pr = pr.DeepCopy()
		pr.Name = pr.GenerateName + "xxxxx"
	}
	if err := pr.Validate(ctx); err != nil {
		return fmt.Errorf("invalid PipelineRun %s: %w", displayName(pr), err)
	}
	return nil
}

func checkInput(r Run) error {
	var errs []error
	if (r.Name == "") == (r.GenerateName == "") {
		errs = append(errs, errors.New("exactly one of Name and GenerateName must be set"))
	}
	if r.Pipeline == nil {
		return errors.Join(append(errs, errors.New("pipeline shape is missing"))...)
	}
	declared := make(map[string]bool, len(r.Pipeline.Params))
	for _, p := range r.Pipeline.Params {
		declared[p.Name] = true
	}
	given := make(map[string]bool, len(r.Params))
	for _, p := range r.Params {
		switch {
		case !declared[p.Name]:
			errs = append(errs, fmt.Errorf("param %q is not declared by the pipeline (declared: %s)", p.Name, paramNames(r.Pipeline.Params)))
		case given[p.Name]:
			errs = append(errs, fmt.Errorf("param %q is given twice", p.Name))
		}
		given[p.Name] = true
	}
	for _, p := range r.Pipeline.Params {
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
