package kfpir

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

func stepsByName(ts *tektonv1.EmbeddedTask) (map[string]tektonv1.Step, []string) {
	out := map[string]tektonv1.Step{}
	var order []string
	for _, s := range ts.Steps {
		out[s.Name] = s
		order = append(order, s.Name)
	}
	return out, order
}

func marker(step string) tektonv1.WhenExpression {
	return tektonv1.WhenExpression{Input: "$(steps." + step + ".results." + MarkerResult + ")", Operator: selection.In, Values: []string{"true", "false"}}
}

// TestAnExitPipelineWhoseTasksDependOnEachOther: the exit pipeline is one
// finally task whose steps are its tasks in dependency order, data passed
// as step results, artifacts on the artifacts volume, conditions as step
// when expressions (one decided at run time by a condition step), each
// step after the success markers of the steps it depends on, and a check
// step per task at the end.
func TestAnExitPipelineWhoseTasksDependOnEachOther(t *testing.T) {
	p := compileValid(t, load(t, "exit_pipeline.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	assert.Equal(t, []string{"work"}, names(p.Spec.Tasks))
	require.Equal(t, []string{"notify"}, names(p.Spec.Finally))
	notify := p.Spec.Finally[0]
	assert.Empty(t, notify.RunAfter)
	steps, order := stepsByName(notify.TaskSpec)
	assert.Equal(t, []string{installStep, "state", "tidy", "report", "alert", "condition-2", "shout",
		"check-state", "check-tidy", "check-report", "check-alert", "check-condition-2", "check-shout"}, order)

	// The group's final status reaches state through a param of the task.
	var status string
	for _, prm := range notify.Params {
		if prm.Name == "state-status" {
			status = prm.Value.StringVal
		}
	}
	var parsed map[string]any
	require.NoError(t, json.Unmarshal([]byte(status), &parsed), "state's status param: %v", notify.Params)
	assert.Equal(t, "$(tasks.status)", parsed["state"])
	assert.Contains(t, steps["state"].Args, "status=$(params.state-status)")
	// state's own input is a STRUCT; the launcher still gets it as the final
	// status, which it puts in KFP's words (FAILED, not Tekton's Failed).
	assert.Contains(t, strings.Join(steps["state"].Args, " "), `"status":{"type":"TASK_FINAL_STATUS"}`)
	assert.Contains(t, steps["state"].Args, "Output=$(step.results.Output.path)")

	report := steps["report"]
	assert.Contains(t, strings.Join(report.Args, " "), "--param-file state=/tekton/steps/step-state/results/Output",
		"state's output, a step result, read from its file")
	assert.Contains(t, report.Args, "note=$(params.report-note)")
	assert.Contains(t, strings.Join(report.Args, " "), "--cached-result $(step.results."+MarkerResult+".path)")
	assert.Equal(t, tektonv1.StepWhenExpressions{marker("state")}, report.When)
	var results []string
	for _, r := range report.Results {
		results = append(results, r.Name)
	}
	assert.Equal(t, []string{"count", MarkerResult}, results)

	alert := steps["alert"]
	assert.Equal(t, tektonv1.StepWhenExpressions{
		{Input: "$(steps.state.results.Output)", Operator: selection.In, Values: []string{"FAILED"}},
		marker("report"), marker("state"),
	}, alert.When)
	assert.Contains(t, alert.Args, "summary=file:///kfp/artifacts/$(context.pipelineRun.name)/report/summary", "report's artifact, on the volume")

	gate := steps["condition-2"]
	assert.Equal(t, []string{"condition", "--condition", "int(inputs.parameter_values['pipelinechannel--report-count']) > 1",
		"--result", "$(step.results.outcome.path)",
		"--param-file", "pipelinechannel--report-count", "NUMBER_INTEGER", "/tekton/steps/step-report/results/count"}, gate.Args)
	assert.Equal(t, tektonv1.StepWhenExpressions{marker("report")}, gate.When)
	assert.Equal(t, tektonv1.StepWhenExpressions{
		{Input: "$(steps.condition-2.results.outcome)", Operator: selection.In, Values: []string{"true"}},
		{Input: "$(steps.condition-2.results.outcome)", Operator: selection.In, Values: []string{"true", "false"}},
		marker("report"),
	}, steps["shout"].When)
	assert.Empty(t, steps["tidy"].When, "independent of the others: runs whatever they do")

	for _, name := range []string{"state", "tidy", "report", "alert", "condition-2", "shout"} {
		assert.Equal(t, tektonv1.Continue, steps[name].OnError, "%s: a failure does not stop the others", name)
		check := steps["check-"+name]
		assert.Empty(t, check.OnError, "check-%s fails the task", name)
		assert.Equal(t, steps[name].When, check.When, "check-%s runs when %s was to run", name, name)
		want := MarkerResult
		if name == "condition-2" {
			want = GateResult
		}
		assert.Equal(t, "$(steps."+name+".results."+want+")", check.Args[len(check.Args)-1])
	}
	assert.Empty(t, steps[installStep].When)
}

// TestTheExitCheckFailsOnAMissingMarker: the check step's condition holds
// for either marker value, and the launcher refuses the text Tekton's
// entrypoint leaves when the marker is missing.
func TestTheExitCheckFailsOnAMissingMarker(t *testing.T) {
	p := compileValid(t, load(t, "exit_pipeline.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	steps, _ := stepsByName(p.Spec.Finally[0].TaskSpec)
	args := steps["check-report"].Args
	require.Equal(t, "condition", args[0])
	expr, key, typ := args[2], args[6], args[7]
	for _, text := range []string{"true", "false"} {
		v, err := launcher.Value(typ, text)
		require.NoError(t, err)
		ok, err := kfpcel.Condition(expr, map[string]*structpb.Value{key: v})
		require.NoError(t, err)
		assert.True(t, ok)
	}
	_, err := launcher.Value(typ, args[8])
	assert.Error(t, err, "a missing marker, %s, is no boolean", args[8])
}

// TestExitPipelineRefusals: a loop inside the exit pipeline, retries and
// a param mixing a step's output with another run-time value are refused
// by name.
func TestExitPipelineRefusals(t *testing.T) {
	spec := load(t, "exit_pipeline.yaml")
	spec.Components["comp-notify"].DAG.Tasks["condition-2"].ParameterIter = raw(`{"items":{"raw":"[1, 2]"},"itemInput":"pipelinechannel--loop-item"}`)
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "loop (dsl.ParallelFor) inside an exit task that is a pipeline")

	spec = load(t, "exit_pipeline.yaml")
	spec.Components["comp-notify"].DAG.Tasks["report"].RetryPolicy = &RetryPolicy{MaxRetryCount: 2}
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "retries in an exit task that is a pipeline")

	spec = load(t, "exit_pipeline.yaml")
	in := spec.Components["comp-notify"].DAG.Tasks["report"].Inputs.Parameters
	in["pipelinechannel--note"] = in["note"]
	in["note"] = &InputParameter{RuntimeValue: &RuntimeValue{
		Constant: raw(`"{{$.inputs.parameters['state']}} {{$.inputs.parameters['pipelinechannel--note']}}"`)}}
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "value mixing an output of a task of an exit pipeline with other run-time values")
}

// TestAnExitPipelineOnAnObjectStoreRoot: the fetch and store steps of a
// task are steps of the exit pipeline's task under its when expressions.
func TestAnExitPipelineOnAnObjectStoreRoot(t *testing.T) {
	p := compileValid(t, load(t, "exit_pipeline.yaml"), s3Options())
	steps, order := stepsByName(p.Spec.Finally[0].TaskSpec)
	assert.Contains(t, order, "report-store")
	assert.Contains(t, order, "alert-fetch")
	assert.Equal(t, steps["alert"].When, steps["alert-fetch"].When)
	assert.Equal(t, tektonv1.Continue, steps["alert-fetch"].OnError)
	store := steps["report-store"]
	assert.Empty(t, store.OnError, "a failure to store fails the task")
	assert.Equal(t, append(slices.Clone(steps["report"].When), marker("report")), store.When, "after report succeeded")
}

// TestAnOutputInsideOtherTextIsSubstituted: a value that is an earlier
// step's output whole is read from its file; one inside other text (an
// f-string) is Tekton's substitution of the step result.
func TestAnOutputInsideOtherTextIsSubstituted(t *testing.T) {
	assert.Equal(t, []string{"launch", "--param-file", "a=/tekton/steps/step-s/results/R", "--param", "b=x $(steps.s.results.R)"},
		fileParams([]string{"launch", "--param", "a=$(steps.s.results.R)", "--param", "b=x $(steps.s.results.R)"}))
	spec := load(t, "exit_pipeline.yaml")
	in := spec.Components["comp-notify"].DAG.Tasks["report"].Inputs.Parameters
	in["pipelinechannel--state-Output"] = in["state"]
	in["state"] = &InputParameter{RuntimeValue: &RuntimeValue{Constant: raw(`"state: {{$.inputs.parameters['pipelinechannel--state-Output']}}"`)}}
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	steps, _ := stepsByName(p.Spec.Finally[0].TaskSpec)
	assert.Contains(t, steps["report"].Args, "state=state: $(steps.state.results.Output)")
	assert.Contains(t, steps["report"].When, marker("state"))
}

// TestResourcesFromParametersInAnExitPipeline: a resource from a pipeline
// parameter is set by the run on the task's step of the exit pipeline's
// task.
func TestResourcesFromParametersInAnExitPipeline(t *testing.T) {
	spec := load(t, "exit_pipeline.yaml")
	spec.DeploymentSpec.Executors["exec-report"].Container.Resources = &Resources{ResourceCPULimit: "{{$.inputs.parameters['pipelinechannel--note']}}"}
	spec.Components["comp-notify"].DAG.Tasks["report"].Inputs.Parameters["pipelinechannel--note"] = &InputParameter{ComponentInputParameter: "note"}
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	var entries []ResourceParam
	require.NoError(t, json.Unmarshal([]byte(p.Annotations[contract.AnnotationResourceParams]), &entries))
	assert.Equal(t, []ResourceParam{{PipelineTaskName: "notify", Step: "report", List: "limits", Name: "cpu", QuantityParam: "message"}}, entries)
}
