package kfpir

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoopsOverArtifactLists: a loop over the artifacts collected from an
// unrolled loop is unrolled, each iteration taking its producer's
// artifact; one over those of a fanned-out task fans out over the
// producer's gathered {uri, metadata} results, which the launcher takes
// one per TaskRun (--artifact-json).
func TestLoopsOverArtifactLists(t *testing.T) {
	p := compileValid(t, load(t, "loop_artifacts.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)

	for i, iter := range []string{"0", "1", "2"} {
		show := tasks["for-loop-1-"+iter+"-show"]
		require.NotNil(t, show.TaskSpec, "iteration %d", i)
		assert.Nil(t, show.Matrix)
		cmd := strings.Join(show.TaskSpec.Steps[len(show.TaskSpec.Steps)-1].Command, " ")
		assert.Contains(t, cmd, "/make-static-for-loop-1-"+iter+"-make/out", "iteration %d takes its own artifact", i)
		assert.Contains(t, show.RunAfter, "make-static-for-loop-1-"+iter+"-make")
	}
	_, fourth := tasks["for-loop-1-3-show"]
	assert.False(t, fourth, "one iteration per artifact")

	mk := tasks["make-runtime-for-loop-1-make"]
	assert.Contains(t, strings.Join(mainArgs(mk), " "), "--artifact-result out=$(results.kfp-artifact-out.path)", "the producer reports its artifact")
	show := tasks["show-2"]
	require.NotNil(t, show.Matrix)
	require.Len(t, show.Matrix.Params, 1)
	assert.Equal(t, "kfp-artifact-data", show.Matrix.Params[0].Name)
	assert.Equal(t, []string{"$(tasks.make-runtime-for-loop-1-make.results.kfp-artifact-out[*])"}, []string{show.Matrix.Params[0].Value.StringVal})
	args := strings.Join(mainArgs(show), " ")
	assert.Contains(t, args, "--artifact-json data=$(params.kfp-artifact-data)")
	assert.Contains(t, args, "--output-uri file:///kfp/artifacts/$(context.pipelineRun.name)/$(context.taskRun.name)")
	tick := tasks["tick"]
	require.NotNil(t, tick.Matrix, "a task of the loop taking no item runs once per artifact")
	assert.Equal(t, []string{"$(tasks.make-runtime-for-loop-1-make.results.kfp-artifact-out[*])"}, []string{tick.Matrix.Params[0].Value.StringVal})
	for name := range tasks {
		assert.NotContains(t, name, "for-loop-2", "a loop over artifacts needs no items task")
	}
}

func TestLoopsOverArtifactListsRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate  func(*PipelineSpec)
		opts    Options
		feature string
	}{
		"an object-store root": {func(*PipelineSpec) {}, s3Options(),
			"loop over a run-time artifact list with an object-store pipeline root"},
		"a single artifact": {func(s *PipelineSpec) {
			s.Root.DAG.Tasks["for-loop-1"].Inputs.Artifacts["pipelinechannel--make-static-Output"] = &InputArtifact{
				TaskOutputArtifact: &TaskOutputArtifact{ProducerTask: "make-static/for-loop-1/0/make", OutputArtifactKey: "out"}}
		}, Options{}, "invalid"},
		"a pipeline input list": {func(s *PipelineSpec) {
			s.Root.DAG.Tasks["for-loop-1"].Inputs.Artifacts["pipelinechannel--make-static-Output"] = &InputArtifact{ComponentInputArtifact: "datasets"}
		}, Options{}, "loop (dsl.ParallelFor) over a pipeline input artifact list"},
		"a parallelism limit at run time": {func(s *PipelineSpec) {
			s.Root.DAG.Tasks["for-loop-2"].IteratorPolicy = raw(`{"parallelismLimit": 2}`)
		}, Options{}, "parallelism limit on a loop over a run-time list"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := load(t, "loop_artifacts.yaml")
			tc.mutate(spec)
			tc.opts.Name, tc.opts.LauncherImage = "x", launcherImage
			_, err := Compile(spec, tc.opts)
			require.Error(t, err)
			if tc.feature == "invalid" {
				return
			}
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Feature, tc.feature)
		})
	}
}

// TestParallelismLimitOnAnUnrolledArtifactLoop: iteration i runs after
// iteration i-limit, as for a loop over parameters.
func TestParallelismLimitOnAnUnrolledArtifactLoop(t *testing.T) {
	spec := load(t, "loop_artifacts.yaml")
	spec.Root.DAG.Tasks["for-loop-1"].IteratorPolicy = raw(`{"parallelismLimit": 1}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	assert.Contains(t, tasks["for-loop-1-2-show"].RunAfter, "for-loop-1-1-show")
}

// TestALoopOverAFieldOfARunTimeItemRunsOverThePairs: the inner loop's
// items task flattens the (outer item, inner item) pairs from the outer
// loop's list, every array aligned with the pairs; a task of the inner
// loop fans out over the one value it takes, of either item.
func TestALoopOverAFieldOfARunTimeItemRunsOverThePairs(t *testing.T) {
	p := compileValid(t, load(t, "loop_nested.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	items := tasks["for-loop-2"]
	require.NotNil(t, items.TaskSpec)
	assert.Equal(t, "$(params.loop_parameter)", paramValue(items, "list"), "the outer loop's list")
	args := strings.Join(items.TaskSpec.Steps[0].Args, " ")
	assert.Contains(t, args, `--nest parseJson(string_value)["p_a"]`)
	assert.Contains(t, args, `--result parseJson(string_value)["q_a"]`)
	assert.Contains(t, args, `--outer-result parseJson(string_value)["p_b"]`)

	refs := map[string]string{}
	for _, name := range []string{"show-2", "show-3"} {
		pt := tasks[name]
		require.NotNil(t, pt.Matrix, name)
		require.Len(t, pt.Matrix.Params, 1, name)
		refs[name] = pt.Matrix.Params[0].Value.StringVal
		assert.Contains(t, refs[name], "$(tasks.for-loop-2.results.items-", name)
	}
	assert.NotEqual(t, refs["show-2"], refs["show-3"], "the inner item's field, the outer item's")
	assert.Contains(t, tasks["show"].Matrix.Params[0].Value.StringVal, "$(tasks.for-loop-1.results.items-", "a task of the outer loop fans out over its items")
}

func TestNestedRunTimeLoopRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate  func(*PipelineSpec)
		feature string
	}{
		"both items in one task": {func(s *PipelineSpec) {
			s.Components["comp-show"].InputDefinitions.Parameters["b"] = &ParameterSpec{ParameterType: "STRING"}
			s.Components["comp-for-loop-2"].DAG.Tasks["show-2"].Inputs.Parameters["b"] = &InputParameter{
				ComponentInputParameter: "pipelinechannel--loop_parameter-loop-item", ParameterExpression: `parseJson(string_value)["p_b"]`}
		}, "two fields of a run-time loop's item in one task"},
		"a cross product": {func(s *PipelineSpec) {
			s.Components["comp-for-loop-1"].DAG.Tasks["for-loop-2"].Inputs.Parameters["pipelinechannel--loop_parameter-loop-item-subvar-p_a"] = &InputParameter{
				ComponentInputParameter: "pipelinechannel--loop_parameter"}
		}, "loop over a run-time list inside another"},
		"a parallelism limit": {func(s *PipelineSpec) {
			s.Components["comp-for-loop-1"].DAG.Tasks["for-loop-2"].IteratorPolicy = raw(`{"parallelismLimit": 1}`)
		}, "parallelism limit on a loop over a run-time list"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := load(t, "loop_nested.yaml")
			if name == "a cross product" {
				spec.Components["comp-for-loop-1"].DAG.Tasks["for-loop-2"].Inputs.Parameters["pipelinechannel--loop_parameter"] = &InputParameter{ComponentInputParameter: "pipelinechannel--loop_parameter"}
			}
			tc.mutate(spec)
			_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Feature, tc.feature)
		})
	}
}
