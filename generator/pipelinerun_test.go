package generator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func shape(t *testing.T) *tektonv1.PipelineSpec {
	t.Helper()
	spec := &tektonv1.PipelineSpec{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
params:
  - {name: first, type: string}
  - {name: second, type: string, default: two}
workspaces:
  - {name: scratch}
tasks:
  - name: one
    taskRef: {name: task-one, kind: Task}
    params:
      - {name: a, value: $(params.first)}
      - {name: b, value: $(params.second)}
    workspaces: [{name: w, workspace: scratch}]
  - name: two
    runAfter: [one]
    taskRef: {name: task-two, kind: Task}
    params:
      - {name: id, value: $(tasks.one.results.id)}
results:
  - {name: id, type: string, value: $(tasks.one.results.id)}
`), spec))
	return spec
}

func validRun() Run {
	return Run{
		Namespace:          "team-a",
		Name:               "run-1",
		Labels:             map[string]string{"a": "b"},
		ServiceAccountName: "provider-sa",
		Params:             tektonv1.Params{StringParam("second", "2"), StringParam("first", "1")},
		Workspaces:         []tektonv1.WorkspaceBinding{{Name: "scratch", EmptyDir: &corev1EmptyDir}},
		Timeout:            &metav1.Duration{Duration: 3600e9},
	}
}

func TestBuildEmbedsTheShapeAndPassesTektonValidation(t *testing.T) {
	spec := shape(t)
	pr, err := Build(context.Background(), spec, validRun())
	require.NoError(t, err)

	assert.Equal(t, "tekton.dev/v1", pr.APIVersion)
	assert.Equal(t, "PipelineRun", pr.Kind)
	assert.Equal(t, "team-a", pr.Namespace)
	assert.Equal(t, "provider-sa", pr.Spec.TaskRunTemplate.ServiceAccountName)
	assert.Equal(t, []string{"first", "second"}, []string{pr.Spec.Params[0].Name, pr.Spec.Params[1].Name},
		"params follow the shape's declaration order")
	assert.Equal(t, []string{"one"}, pr.Spec.PipelineSpec.Tasks[1].RunAfter)
	assert.Equal(t, "task-one", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	assert.Nil(t, pr.Validate(context.Background()), "Tekton validation")

	pr.Spec.PipelineSpec.Tasks[0].Name = "mutated"
	assert.Equal(t, "one", spec.Tasks[0].Name, "the shape is copied, never shared with the output")
}

func TestBuildWithGenerateName(t *testing.T) {
	in := validRun()
	in.Name, in.GenerateName = "", "operator-main-"
	pr, err := Build(context.Background(), shape(t), in)
	require.NoError(t, err)
	assert.Empty(t, pr.Name)
	assert.Equal(t, "operator-main-", pr.GenerateName)
}

func TestBuildRefusesBadInput(t *testing.T) {
	cases := map[string]struct {
		mutate func(*Run, *tektonv1.PipelineSpec)
		want   string
	}{
		"both names":        {func(r *Run, _ *tektonv1.PipelineSpec) { r.GenerateName = "x-" }, "exactly one of Name and GenerateName"},
		"no name":           {func(r *Run, _ *tektonv1.PipelineSpec) { r.Name = "" }, "exactly one of Name and GenerateName"},
		"empty shape":       {func(_ *Run, s *tektonv1.PipelineSpec) { *s = tektonv1.PipelineSpec{} }, `param "first" is not declared`},
		"undeclared param":  {func(r *Run, _ *tektonv1.PipelineSpec) { r.Params = append(r.Params, StringParam("third", "3")) }, `param "third" is not declared`},
		"param given twice": {func(r *Run, _ *tektonv1.PipelineSpec) { r.Params = append(r.Params, StringParam("first", "again")) }, `param "first" is given twice`},
		"missing param":     {func(r *Run, _ *tektonv1.PipelineSpec) { r.Params = r.Params[:1] }, `param "first" has no default and no value`},
		"name too long":     {func(r *Run, _ *tektonv1.PipelineSpec) { r.Name = strings.Repeat("a", 64) }, "invalid PipelineRun"},
		"unbound workspace": {func(r *Run, _ *tektonv1.PipelineSpec) { r.Workspaces = nil }, ""},
		"bad task reference": {func(_ *Run, s *tektonv1.PipelineSpec) {
			s.Tasks[1].Params[0].Value.StringVal = "$(tasks.nope.results.id)"
		}, "invalid PipelineRun"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, spec := validRun(), shape(t)
			tc.mutate(&in, spec)
			pr, err := Build(context.Background(), spec, in)
			if tc.want == "" {
				// Tekton leaves workspace binding to run time; the generator must not
				// invent a stricter rule.
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Nil(t, pr)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

var corev1EmptyDir = corev1.EmptyDirVolumeSource{}

func TestBuildWithoutShape(t *testing.T) {
	_, err := Build(context.Background(), nil, validRun())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipeline shape is missing")
}

// The Builder remembers Tekton's verdict per class of run; what differs
// between runs of one class must still be checked run by run.
func TestBuilderChecksWhatDiffersBetweenRuns(t *testing.T) {
	ctx := context.Background()
	spec := shape(t)
	b := NewBuilder(spec)
	spec.Tasks[0].TaskRef.Name = "changed-after-NewBuilder"

	for _, value := range []string{"1", "another plain value", "x y z"} {
		in := validRun()
		in.Params[1] = StringParam("first", value)
		pr, err := b.Build(ctx, in)
		require.NoError(t, err)
		assert.Nil(t, pr.Validate(ctx), "every run passes Tekton's validation on its own")
		assert.Equal(t, "task-one", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name, "the Builder keeps its own copy of the shape")
	}

	resultRef := validRun()
	resultRef.Params[1] = StringParam("first", "$(tasks.one.results.id)")
	_, err := b.Build(ctx, resultRef)
	require.Error(t, err, "a PipelineRun param may not reference a task result")
	assert.Contains(t, err.Error(), "cannot use result expressions")

	badName := validRun()
	badName.Name = "Not_A_Name"
	_, err = b.Build(ctx, badName)
	require.Error(t, err, "the name is checked even when the run's class is known valid")
	assert.Contains(t, err.Error(), "metadata.name")

	longPrefix := validRun()
	longPrefix.Name, longPrefix.GenerateName = "", strings.Repeat("g", 59)
	_, err = b.Build(ctx, longPrefix)
	require.Error(t, err, "a generateName the API server would complete past 63 characters is refused")
}

func TestBuilderRemembersBoundedVerdicts(t *testing.T) {
	ctx := context.Background()
	b := NewBuilder(shape(t))
	for i := 0; i < 3*maxVerdicts; i++ {
		in := validRun()
		in.Params[1] = StringParam("first", fmt.Sprintf("pa$$word-%d", i)) // each its own class
		_, err := b.Build(ctx, in)
		require.NoError(t, err)
		require.LessOrEqual(t, len(b.verdicts), maxVerdicts)
	}
}
