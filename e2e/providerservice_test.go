//go:build e2e

package e2e

// A provider service (kfp-operator's HTTP API) as a Provider's backend on
// the real cluster: the operator runs the fixture service as a Deployment,
// every kind's create, update and delete reaches it through the shared
// Tasks, its refusals (400, 500, 501) reach the resource in its words, its
// run completions come back through the events relay and /events, and a
// RunConfiguration dependency chain completes through it.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceProvider installs Provider "kfp" with the provider chart as the
// fixture provider service, the fixture compiler as framework "fixture".
// helmArgs are more settings, e.g. the fixture's mode.
func serviceProvider(t *testing.T, ns string, helmArgs ...string) {
	t.Helper()
	installed := time.Now()
	args := []string{"install", "kfp", filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--namespace", ns, "--set", "provider.serviceImage=" + images["FIXTURE_PROVIDER_SERVICE_IMAGE"],
		"--set", "provider.pipelineRootStorage=mem://root",
		"--set", "provider.parameters.region=eu-west-2",
		"--set", "provider.frameworks[0].name=fixture", "--set", "provider.frameworks[0].image=" + images["FIXTURE_COMPILER_IMAGE"]}
	run(t, filepath.Join(root, "bin", "helm"), append(args, helmArgs...)...)
	waitFor(t, 3*time.Minute, "Provider "+ns+"/kfp Ready with its service", func() (bool, string) {
		return readyIs(get(t, "Provider", ns, "kfp"), "True")
	})
	t.Logf("provider service Ready %.1f s after helm install", time.Since(installed).Seconds())
}

// idOf is a resource's backend id.
func idOf(t *testing.T, kind, ns, name string) string {
	id, _, _ := unstructured.NestedString(get(t, kind, ns, name).Object, "status", "provider", "id")
	return id
}

// serviceLog is what the fixture service logged (one JSON line per request).
func serviceLog(t *testing.T, ns string) string {
	return run(t, "kubectl", "logs", "-n", ns, "-l", "app.kubernetes.io/component=provider-service", "-c", "provider-service", "--tail=-1")
}

// refused waits until kind name is Ready=False with a message containing says.
func refused(t *testing.T, kind, ns, name, says string) {
	t.Helper()
	waitFor(t, syncTimeout, kind+" "+name+" refused", func() (bool, string) {
		status, _, msg := condition(get(t, kind, ns, name), "Ready")
		return status == "False" && strings.Contains(msg, says), status + ": " + msg
	})
}

func TestEveryKindThroughAProviderService(t *testing.T) {
	ns := namespace(t, "e2e-service")
	serviceProvider(t, ns)

	t.Run("Pipeline", func(t *testing.T) {
		t.Parallel()
		create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: penguin}
spec:
  provider: kfp
  image: %s
  env: [{name: GREETING, value: "pa$$word $(x) \"quoted\" ünïcode"}]
  framework: {name: fixture}
`, images["FIXTURE_PIPELINE_IMAGE"]))
		waitFor(t, syncTimeout, "Pipeline created", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "penguin")) })
		assert.Equal(t, ns+"-penguin", idOf(t, "Pipeline", ns, "penguin"))
		assert.Contains(t, serviceLog(t, ns), `pa$$word $(x) \"quoted\" ünïcode`, "the Pipeline's env reached the service unchanged")
		patch(t, "Pipeline", ns, "penguin", `{"spec":{"env":[{"name":"GREETING","value":"again"}]}}`)
		waitFor(t, syncTimeout, "Pipeline updated", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "penguin")) })
		remove(t, "Pipeline", ns, "penguin")
		waitFor(t, syncTimeout, "Pipeline deleted", func() (bool, string) { return get(t, "Pipeline", ns, "penguin") == nil, "still there" })
	})
	t.Run("Experiment", func(t *testing.T) {
		t.Parallel()
		create(t, ns, "kind: Experiment\nmetadata: {name: tuning}\nspec: {provider: kfp, description: first}\n")
		waitFor(t, syncTimeout, "Experiment created", func() (bool, string) { return synchronised(get(t, "Experiment", ns, "tuning")) })
		assert.Equal(t, "experiments/"+ns+"-tuning", idOf(t, "Experiment", ns, "tuning"), "an id with a '/'")
		patch(t, "Experiment", ns, "tuning", `{"spec":{"description":"second"}}`)
		waitFor(t, syncTimeout, "Experiment updated", func() (bool, string) { return synchronised(get(t, "Experiment", ns, "tuning")) })
		assert.Contains(t, serviceLog(t, ns), "experiments/"+ns+"-tuning", "PUT reached the id, escaped")
		remove(t, "Experiment", ns, "tuning")
		waitFor(t, syncTimeout, "Experiment deleted", func() (bool, string) { return get(t, "Experiment", ns, "tuning") == nil, "still there" })
	})
	t.Run("RunSchedule", func(t *testing.T) {
		t.Parallel()
		fixturePipeline(t, ns, "penguin-rs")
		create(t, ns, `
kind: RunSchedule
metadata: {name: nightly}
spec:
  provider: kfp
  pipeline: penguin-rs
  parameters: [{name: TRAINING_RUNS, value: "3"}]
  schedule: {cronExpression: "0 2 * * *"}
`)
		waitFor(t, syncTimeout, "RunSchedule created", func() (bool, string) { return synchronised(get(t, "RunSchedule", ns, "nightly")) })
		assert.Equal(t, "schedule-"+ns+"-nightly", idOf(t, "RunSchedule", ns, "nightly"))
		patch(t, "RunSchedule", ns, "nightly", `{"spec":{"schedule":{"cronExpression":"0 3 * * *"}}}`)
		waitFor(t, syncTimeout, "RunSchedule updated", func() (bool, string) { return synchronised(get(t, "RunSchedule", ns, "nightly")) })
		remove(t, "RunSchedule", ns, "nightly")
		waitFor(t, syncTimeout, "RunSchedule deleted", func() (bool, string) { return get(t, "RunSchedule", ns, "nightly") == nil, "still there" })
	})
	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		fixturePipeline(t, ns, "penguin-run")
		create(t, ns, "kind: Run\nmetadata: {name: once}\nspec: {provider: kfp, pipeline: penguin-run, parameters: [{name: TRAINING_RUNS, value: \"1\"}]}\n")
		waitFor(t, syncTimeout, "Run created", func() (bool, string) { return synchronised(get(t, "Run", ns, "once")) })
		// The service reports the run's completion through the relay and /events.
		waitFor(t, 2*time.Minute, "Run once Succeeded, as the service reported", func() (bool, string) {
			state, msg := completionState(get(t, "Run", ns, "once"))
			return state == "Succeeded", state + ": " + msg
		})
		remove(t, "Run", ns, "once")
		waitFor(t, syncTimeout, "Run deleted", func() (bool, string) { return get(t, "Run", ns, "once") == nil, "still there" })
	})
	t.Run("refusals in the service's words", func(t *testing.T) {
		t.Parallel()
		create(t, ns, "kind: Experiment\nmetadata: {name: bad-request}\nspec: {provider: kfp, description: \"FIXTURE_ANSWER=400:experiment names must be shorter\"}\n")
		create(t, ns, "kind: Experiment\nmetadata: {name: backend-down}\nspec: {provider: kfp, description: \"FIXTURE_ANSWER=500:the backend is down\"}\n")
		create(t, ns, "kind: Experiment\nmetadata: {name: unsupported}\nspec: {provider: kfp, description: \"FIXTURE_ANSWER=501:experiments are not implemented\"}\n")
		refused(t, "Experiment", ns, "bad-request", "experiment names must be shorter")
		refused(t, "Experiment", ns, "backend-down", "the backend is down")
		refused(t, "Experiment", ns, "unsupported", "not supported by this provider service (HTTP 501): experiments are not implemented")
	})
}

func TestRunConfigurationChainThroughAProviderService(t *testing.T) {
	ns := namespace(t, "e2e-service-chain")
	serviceProvider(t, ns)
	for _, name := range []string{"examples-pipeline", "report-pipeline"} {
		fixturePipeline(t, ns, name)
	}
	reportOnExamples(t, ns, "report-pipeline")
	// The fixture reports a first scheduled run of examples as soon as its schedule is created.
	create(t, ns, `
kind: RunConfiguration
metadata: {name: examples}
spec:
  run:
    provider: kfp
    pipeline: examples-pipeline
    artifacts: [{name: model, path: "train:model:0[pushed == 1]"}]
  triggers:
    schedules: [{cronExpression: "0 4 * * *"}]
`)
	triggeredRunSucceeds(t, ns, "report triggered by examples' scheduled run", 4*time.Minute)
	rc := get(t, "RunConfiguration", ns, "examples")
	upstream, _, _ := unstructured.NestedString(rc.Object, "status", "latestRuns", "succeeded", "providerId")
	assert.True(t, strings.HasPrefix(upstream, "schedule-"+ns+"-examples") && strings.HasSuffix(upstream, "-1"),
		"the fixture's first scheduled run of examples' RunSchedule, as it reported it: %s", upstream)
	assert.Contains(t, serviceLog(t, ns), `"model_uri":"mem://`+upstream+`/train/model"`, "report's run got examples' model as its parameter")
}
