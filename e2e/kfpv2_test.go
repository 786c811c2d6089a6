//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider"
)

// TestPythonFunctionComponentsRunOnTekton runs, through the Tekton
// provider, a pipeline compiled as the KFP SDK compiles Python function
// components (internal/testfixtures/kfpexecutor/pipeline.yaml): the SDK's
// own sh command, the executor input {{$}}, an output passed on as a
// typed input, an optional input left unset, a default, and a container
// component with Concat and IfPresent. The component image is the
// kfpexecutor fixture (a shell, and a python3 whose executor behaves as
// KFP's); the launcher is the operator's kfp-task.
func TestPythonFunctionComponentsRunOnTekton(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2")
	tektonProvider(t, ns)
	syncedDemoPipeline(t, ns, "python-functions", "/python.yaml")
	create(t, ns, `
kind: Run
metadata: {name: sum}
spec:
  provider: kfp
  pipeline: python-functions
  parameters:
  - {name: a, value: "2.25"}
`)
	waitRunState(t, 4*time.Minute, ns, "sum", "Succeeded")
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, "sum").Object, "status", "provider", "id")
	var pr tektonv1.PipelineRun
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &pr))
	results := map[string]string{}
	for _, r := range pr.Status.Results {
		results[r.Name] = r.Value.StringVal
	}
	assert.Equal(t, map[string]string{
		"sum":      "3.25",                 // a given, b its default 1.0
		"report":   "total=3.25 note=None", // add's output as a typed input, note absent
		"greeting": "hello y",              // Concat; IfPresent of the unset title gives nothing
	}, results)
	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.NotContains(t, logs, "kfp-task:", "the launcher reported no error")
}

// TestConditionsLoopsAndCollectedOnTekton runs the control-flow pipeline
// (internal/testfixtures/kfpexecutor/control_flow.yaml) through the
// Tekton provider: an if/elif/else chain where the elif holds (its
// condition decided by a condition task evaluating the SDK's CEL), a
// numeric condition nested in it, and a loop over a task's output list
// fanned out by Tekton's Matrix whose outputs are collected, in order,
// as a typed list for a consumer.
func TestConditionsLoopsAndCollectedOnTekton(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-flow")
	tektonProvider(t, ns)
	syncedDemoPipeline(t, ns, "control-flow", "/control-flow.yaml")
	create(t, ns, `
kind: Run
metadata: {name: flow}
spec:
  provider: kfp
  pipeline: control-flow
  parameters:
  - {name: side, value: tails}
  - {name: "n", value: "3"}
`)
	waitRunState(t, 5*time.Minute, ns, "flow", "Succeeded")
	pr := runPipelineRun(t, ns, "flow")
	results := map[string]string{}
	for _, r := range pr.Status.Results {
		results[r.Name] = r.Value.StringVal
	}
	assert.Equal(t, map[string]string{"Output": "[1,4,9]"}, results, "the squares of make-list's items, collected in order")
	skipped := map[string]bool{}
	for _, s := range pr.Status.SkippedTasks {
		skipped[s.Name] = true
	}
	assert.Equal(t, map[string]bool{"say-heads": true, "say-edge": true}, skipped, "the if and the else are skipped; the elif and its nested condition run")
	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.Contains(t, logs, "said: tails")
	assert.Contains(t, logs, "said: big 3", "the nested int() condition held, and the f-string was filled")
	assert.NotContains(t, logs, "kfp-task:", "the launcher reported no error")
}

// TestAnExitHandlerRunsAfterAFailure runs the exit-handler pipeline: the
// group's task fails, the exit task still runs, and sees the group's
// status as KFP's PipelineTaskFinalStatus (state FAILED).
func TestAnExitHandlerRunsAfterAFailure(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-exit")
	tektonProvider(t, ns)
	syncedDemoPipeline(t, ns, "exit-handler", "/exit-handler.yaml")
	create(t, ns, `
kind: Run
metadata: {name: failing}
spec:
  provider: kfp
  pipeline: exit-handler
`)
	waitRunState(t, 4*time.Minute, ns, "failing", "Failed")
	pr := runPipelineRun(t, ns, "failing")
	cleanup := childTaskRun(t, ns, pr, "cleanup")
	require.NotNil(t, cleanup, "the exit task ran")
	require.Len(t, cleanup.Status.Results, 1)
	var status map[string]any
	require.NoError(t, json.Unmarshal([]byte(cleanup.Status.Results[0].Value.StringVal), &status))
	assert.Equal(t, "FAILED", status["state"])
	assert.Equal(t, "exit-handler-1", status["pipelineTaskName"])
	assert.Equal(t, pr.Name, status["pipelineJobResourceName"])
}

// TestAnExitPipelineRunsItsTasksAsSteps runs an exit task that is a
// pipeline whose tasks depend on each other
// (internal/testfixtures/kfpexecutor/exit_pipeline.yaml): one finally
// task runs them as steps in dependency order; a value and an artifact
// pass between them, a condition on a value holds and one decided at run
// time does not, a failing task skips its dependant but not the tasks
// independent of it, and its check step fails the exit task.
func TestAnExitPipelineRunsItsTasksAsSteps(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-exitpipeline")
	tektonProvider(t, ns)
	syncedDemoPipeline(t, ns, "exit-pipeline", "/exit-pipeline.yaml")
	create(t, ns, `
kind: Run
metadata: {name: failing}
spec:
  provider: kfp
  pipeline: exit-pipeline
`)
	waitRunState(t, 6*time.Minute, ns, "failing", "Failed")
	pr := runPipelineRun(t, ns, "failing")
	notify := childTaskRun(t, ns, pr, "notify")
	require.NotNil(t, notify, "the exit pipeline's task ran")
	steps := map[string]tektonv1.StepState{}
	for _, s := range notify.Status.Steps {
		steps[s.Name] = s
	}
	exit := func(name string) (int32, string) {
		s, ok := steps[name]
		require.True(t, ok, "step %s in %v", name, notify.Status.Steps)
		require.NotNil(t, s.Terminated, "step %s ended", name)
		return s.Terminated.ExitCode, s.TerminationReason
	}
	for _, name := range []string{"state", "report", "alert", "condition-2", "tidy"} {
		code, reason := exit(name)
		assert.Equal(t, int32(0), code, name)
		assert.NotEqual(t, "Skipped", reason, "%s ran", name)
	}
	for _, name := range []string{"shout", "after-broken"} {
		_, reason := exit(name)
		assert.Equal(t, "Skipped", reason, "%s is skipped", name)
	}
	code, reason := exit("broken")
	assert.Equal(t, int32(4), code, "broken failed as its component did")
	assert.Equal(t, "Continued", reason, "and the steps after it ran")
	code, _ = exit("check-broken")
	assert.NotEqual(t, int32(0), code, "the check of broken fails the exit task")
	assert.False(t, notify.Status.GetCondition("Succeeded").IsTrue(), "the exit task failed")
	logs := tkn(t, "taskrun", "logs", notify.Name, "-n", ns)
	assert.Contains(t, logs, "alert: report: FAILED", "state's output reached report, report's artifact reached alert")
	assert.Contains(t, logs, "said: tidy ran")
	assert.NotContains(t, logs, "said: after broken")
}

// runPipelineRun is the ML PipelineRun of a Run of the Tekton provider.
func runPipelineRun(t *testing.T, ns, run string) tektonv1.PipelineRun {
	t.Helper()
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, run).Object, "status", "provider", "id")
	var pr tektonv1.PipelineRun
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &pr))
	return pr
}

// childTaskRun is the TaskRun of pipeline task name in pr, nil if there
// is none (the last, if there are several).
func childTaskRun(t *testing.T, ns string, pr tektonv1.PipelineRun, name string) *tektonv1.TaskRun {
	t.Helper()
	var found *tektonv1.TaskRun
	for _, ref := range pr.Status.ChildReferences {
		if ref.PipelineTaskName == name {
			var tr tektonv1.TaskRun
			require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ref.Name}, &tr))
			found = &tr
		}
	}
	return found
}

// TestASecondRunIsCached runs the control-flow pipeline (every task
// asking for caching, as the SDK's default) twice with the same inputs:
// the second run's tasks, fanned-out ones included, reuse the first's
// outputs (KFP's caching, in the namespace's directory of the artifacts
// volume) without running, say so in their result and log, and give the
// same results; a run with kfp-enable-caching=false runs every task
// again; and a pipeline whose tasks say enableCache: false is never
// cached.
func TestASecondRunIsCached(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-cache")
	tektonProvider(t, ns)
	demoPipeline(t, ns, "control-flow", "/control-flow.yaml")
	demoPipeline(t, ns, "python-functions", "/python.yaml")
	for _, p := range []string{"control-flow", "python-functions"} {
		waitFor(t, 4*time.Minute, "Pipeline "+p+" synchronised", func() (bool, string) {
			return synchronised(get(t, "Pipeline", ns, p))
		})
	}
	runOf := func(pipeline, name, params string) (map[string]string, map[string]string) {
		create(t, ns, "kind: Run\nmetadata: {name: "+name+"}\nspec:\n  provider: kfp\n  pipeline: "+pipeline+"\n  parameters:\n"+params)
		waitRunState(t, 5*time.Minute, ns, name, "Succeeded")
		pr := runPipelineRun(t, ns, name)
		results := map[string]string{}
		for _, r := range pr.Status.Results {
			results[r.Name] = r.Value.StringVal
		}
		cached := map[string]string{}
		for _, ref := range pr.Status.ChildReferences {
			var tr tektonv1.TaskRun
			require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ref.Name}, &tr))
			for _, r := range tr.Status.Results {
				if r.Name == "kfp-cached" {
					cached[ref.PipelineTaskName] += r.Value.StringVal + " "
				}
			}
		}
		return results, cached
	}
	flow := "  - {name: side, value: tails}\n  - {name: \"n\", value: \"3\"}\n"
	want := func(v string) map[string]string {
		return map[string]string{"flip": v + " ", "say-tails": v + " ", "say-big": v + " ", "make-list": v + " ",
			"square": strings.Repeat(v+" ", 3), "total": v + " "}
	}
	first, cached := runOf("control-flow", "first", flow)
	assert.Equal(t, want("false"), cached, "the first run's tasks run")
	second, cached := runOf("control-flow", "second", flow)
	assert.Equal(t, want("true"), cached, "the second run's tasks are cached, each of the loop's too")
	assert.Equal(t, first, second, "with the same results")
	logs := tkn(t, "pipelinerun", "logs", runPipelineRun(t, ns, "second").Name, "-n", ns)
	assert.Contains(t, logs, `task "total" is cached: the outputs of its execution in `+runPipelineRun(t, ns, "first").Name+" are reused")
	third, cached := runOf("control-flow", "third", flow+"  - {name: kfp-enable-caching, value: \"false\"}\n")
	assert.Equal(t, want("false"), cached, "caching off for the run")
	assert.Equal(t, first, third)

	for _, name := range []string{"py-1", "py-2"} {
		_, cached = runOf("python-functions", name, "  - {name: a, value: \"2.25\"}\n")
		assert.Empty(t, cached, "enableCache: false: the tasks are not cached (%s)", name)
	}
}

// TestKubernetesSettingsOnTheNode runs a pipeline with kfp-kubernetes
// settings (internal/testfixtures/kfpexecutor/secret_env.yaml): a Secret
// and a ConfigMap of the namespace as env, a field path as env, a node
// selector and pod labels through the run's taskRunSpecs. The step reads
// them, so the kubelet's own resolution is what is checked.
func TestKubernetesSettingsOnTheNode(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-k8s")
	tektonProvider(t, ns)
	create(t, ns, "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: \"s3cr3t é $(x)\"}\n")
	create(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n")
	syncedDemoPipeline(t, ns, "secret-env", "/secret-env.yaml")
	create(t, ns, "kind: Run\nmetadata: {name: read}\nspec:\n  provider: kfp\n  pipeline: secret-env\n")
	waitRunState(t, 4*time.Minute, ns, "read", "Succeeded")
	pr := runPipelineRun(t, ns, "read")
	require.Len(t, pr.Status.Results, 1)
	assert.Equal(t, "s3cr3t é $(x)|fast|"+ns, pr.Status.Results[0].Value.StringVal, "the Secret's bytes unchanged, the ConfigMap's, the field path's")
	require.Len(t, pr.Status.ChildReferences, 1)
	var tr tektonv1.TaskRun
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pr.Status.ChildReferences[0].Name}, &tr))
	require.NotNil(t, tr.Spec.PodTemplate)
	assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, tr.Spec.PodTemplate.NodeSelector)
	assert.Equal(t, "ml", tr.Labels["team"], "pod labels from podMetadata")
}

// TestAnImporterOnTheNode runs a pipeline whose task takes an artifact
// from dsl.importer (internal/testfixtures/kfpexecutor/importer.yaml): a
// file already in the namespace's directory of the artifacts volume,
// named by a run parameter; the task reads it and the importer's
// metadata, and no pod runs for the importer.
func TestAnImporterOnTheNode(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-import")
	volume := tektonProvider(t, ns)
	dir, err := tektonprovider.NamespaceDirectory(ns)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(volume, dir, "imported"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(volume, dir, "imported", "data.txt"), []byte("hello imported\n"), 0o644))
	syncedDemoPipeline(t, ns, "importer", "/importer.yaml")
	create(t, ns, "kind: Run\nmetadata: {name: imp}\nspec:\n  provider: kfp\n  pipeline: importer\n  parameters:\n"+
		"  - {name: uri, value: \"file:///kfp/artifacts/"+dir+"/imported/data.txt\"}\n")
	waitRunState(t, 4*time.Minute, ns, "imp", "Succeeded")
	pr := runPipelineRun(t, ns, "imp")
	require.Len(t, pr.Status.Results, 1)
	assert.Equal(t, "hello imported from e2e", pr.Status.Results[0].Value.StringVal)
	assert.Len(t, pr.Status.ChildReferences, 1, "no pod for the importer")
}
