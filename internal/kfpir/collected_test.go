package kfpir

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

func mainArgs(pt tektonv1.PipelineTask) []string {
	steps := pt.TaskSpec.Steps
	return steps[len(steps)-1].Args
}

func paramValues(pt tektonv1.PipelineTask, prefix string) []string {
	var out []string
	for _, p := range pt.Params {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p.Value.StringVal)
		}
	}
	return out
}

// TestCollectedOverNestedLoopsIsAListOfLists: KFP collects a list of
// lists over nested loops; the launcher regroups the values by shape.
func TestCollectedOverNestedLoopsIsAListOfLists(t *testing.T) {
	p := compileValid(t, load(t, "loop_collected.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	sum := tasks["sum-nested"]
	var want []string
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			want = append(want, "$(tasks.for-loop-2-"+strconv.Itoa(i)+"-for-loop-4-"+strconv.Itoa(j)+"-produce.results.Output)")
		}
	}
	assert.Equal(t, want, paramValues(sum, "nums-"), "every value, outer iteration first")
	args := strings.Join(mainArgs(sum), " ")
	assert.Contains(t, args, "--item-type nums=NUMBER_INTEGER --item nums=$(params.nums-0)")
	assert.Contains(t, args, "--item nums=$(params.nums-5) --item-shape nums=[3,3]", "two lists of three")
}

// TestArtifactListsReachTheConsumerWithEveryIteration: the producers of a
// collected artifact report it ({uri, metadata}) as a result; the
// consumer's launcher takes one per unrolled iteration, or the gathered
// results of a fanned-out task, whose TaskRuns have their own URIs.
func TestArtifactListsReachTheConsumerWithEveryIteration(t *testing.T) {
	p := compileValid(t, load(t, "loop_collected.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)

	produce := tasks["for-loop-2-1-for-loop-4-2-produce"]
	require.NotNil(t, produce.TaskSpec)
	assert.Contains(t, produce.TaskSpec.Results, tektonv1.TaskResult{Name: "kfp-artifact-out", Type: tektonv1.ResultsTypeString,
		Description: "output artifact out: its {uri, metadata} (JSON)"})
	args := strings.Join(mainArgs(produce), " ")
	assert.Contains(t, args, "--artifact-result out=$(results.kfp-artifact-out.path)", "a container producer runs under the launcher to report it")
	assert.Contains(t, args, "--output-uri file:///kfp/artifacts/$(context.pipelineRun.name)/for-loop-2-1-for-loop-4-2-produce")

	join := tasks["join"]
	items := paramValues(join, "kfp-artifact-datasets-")
	require.Len(t, items, 6, "KFP's artifact lists are flat over nested loops")
	assert.Equal(t, "$(tasks.for-loop-2-0-for-loop-4-0-produce.results.kfp-artifact-out)", items[0])
	assert.Equal(t, "$(tasks.for-loop-2-1-for-loop-4-2-produce.results.kfp-artifact-out)", items[5])
	assert.Contains(t, strings.Join(mainArgs(join), " "), "--artifact-item datasets=$(params.kfp-artifact-datasets-0) --artifact-item datasets=$(params.kfp-artifact-datasets-1)")
	assert.Contains(t, join.RunAfter, "for-loop-2-0-for-loop-4-0-produce")
	assert.Contains(t, join.TaskSpec.Steps[1].Args[2], `"list":true`, "the launcher spec says the input is a list")

	mk := tasks["make"]
	require.NotNil(t, mk.Matrix)
	assert.Contains(t, strings.Join(mainArgs(mk), " "), "--output-uri file:///kfp/artifacts/$(context.pipelineRun.name)/$(context.taskRun.name)",
		"each iteration of a fanned-out task writes its own artifact")
	rt := tasks["join-rt"]
	assert.Equal(t, []string{"$(tasks.make.results.kfp-artifact-out[*])"}, paramValues(rt, "kfp-artifact-datasets"))
	args = strings.Join(mainArgs(rt), " ")
	assert.Contains(t, args, "--artifact-rest datasets")
	assert.True(t, strings.HasSuffix(args, "-- $(params.kfp-artifact-datasets[*])"), args)
}

// TestPipelineOutputsCollectedFromLoopsAreArrayResults: the gathered
// results of a fanned-out task; over nested unrolled loops one JSON list
// per outer iteration.
func TestPipelineOutputsCollectedFromLoopsAreArrayResults(t *testing.T) {
	p := compileValid(t, load(t, "loop_collected.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	results := map[string]tektonv1.PipelineResult{}
	for _, r := range p.Spec.Results {
		results[r.Name] = r
	}
	assert.Equal(t, tektonv1.ResultsTypeArray, results["made"].Type)
	assert.Equal(t, "$(tasks.make.results.Output[*])", results["made"].Value.StringVal)
	nested := results["nested"]
	assert.Equal(t, tektonv1.ResultsTypeArray, nested.Type)
	require.Len(t, nested.Value.ArrayVal, 2)
	assert.Equal(t, "[$(tasks.for-loop-2-1-for-loop-4-0-produce.results.Output),$(tasks.for-loop-2-1-for-loop-4-1-produce.results.Output),$(tasks.for-loop-2-1-for-loop-4-2-produce.results.Output)]", nested.Value.ArrayVal[1])
}

func TestCollectedRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate  func(*PipelineSpec)
		feature string
	}{
		"an output artifact list": {func(s *PipelineSpec) {
			s.Components["comp-produce"].OutputDefinitions.Artifacts["out"].IsArtifactList = true
		}, "output artifact list"},
		"nested strings as a pipeline output": {func(s *PipelineSpec) {
			s.Components["comp-produce"].OutputDefinitions.Parameters["Output"].ParameterType = "STRING"
		}, "pipeline output of strings collected from nested loops"},
		"a pipeline output artifact from a run-time loop": {func(s *PipelineSpec) {
			s.Root.DAG.Outputs.Artifacts = map[string]json.RawMessage{"all": raw(`{"artifactSelectors": [{"outputArtifactKey": "pipelinechannel--make-out", "producerSubtask": "for-loop-6"}]}`)}
		}, "pipeline output artifact collected from a loop over a run-time list"},
		"a run-time loop inside an unrolled one": {func(s *PipelineSpec) {
			s.Components["comp-for-loop-2"].DAG.Tasks["for-loop-4"].ParameterIter = raw(`{"itemInput": "pipelinechannel--loop-item-param-3", "items": {"inputParameter": "pipelinechannel--texts"}}`)
			s.Components["comp-for-loop-2"].InputDefinitions.Parameters["pipelinechannel--texts"] = &ParameterSpec{ParameterType: "LIST"}
			s.Components["comp-for-loop-2"].DAG.Tasks["for-loop-4"].Inputs.Parameters["pipelinechannel--texts"] = &InputParameter{ComponentInputParameter: "pipelinechannel--texts"}
			s.Components["comp-for-loop-4"].InputDefinitions.Parameters["pipelinechannel--texts"] = &ParameterSpec{ParameterType: "LIST"}
			s.Root.DAG.Tasks["for-loop-2"].Inputs = &TaskInputs{Parameters: map[string]*InputParameter{"pipelinechannel--texts": {ComponentInputParameter: "texts"}}}
		}, "of nested loops"}, // artifact list or collected output: the first consumer compiled
	} {
		t.Run(name, func(t *testing.T) {
			spec := load(t, "loop_collected.yaml")
			tc.mutate(spec)
			_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Feature, tc.feature)
		})
	}
}
