//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const syncTimeout = 3 * time.Minute

// TestEveryKindLifecycle creates, updates (where the kind has one) and
// deletes one resource of every kind in a namespace that enforces Pod
// Security `restricted`: each operation is a PipelineRun that Tekton runs on
// the node, as the provider's service account, and its result reaches the
// resource's status.
func TestEveryKindLifecycle(t *testing.T) {
	ns := namespace(t, "e2e-kinds")
	installProvider(t, ns, "kfp")

	t.Run("Pipeline", func(t *testing.T) {
		t.Parallel()
		create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: penguin}
spec:
  provider: kfp
  image: %s
  env: [{name: PIPELINE_GREETING, value: hello}]
  framework: {name: fixture}
`, images["FIXTURE_PIPELINE_IMAGE"]))
		// The Pipeline's env is set while compiling, as its API says.
		waitFor(t, syncTimeout, "Pipeline created", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "penguin")) })
		var definition struct{ Env []string }
		receivedJSON(t, ns, "Pipeline", "penguin", "pipeline definition ", &definition)
		assert.Equal(t, []string{"PIPELINE_GREETING=hello"}, definition.Env, "the compiler ran with the Pipeline's env")
		lifecycle(t, ns, "Pipeline", "penguin", "pipeline", `{"spec":{"env":[{"name":"PIPELINE_GREETING","value":"hello again"}]}}`)
	})
	t.Run("Experiment", func(t *testing.T) {
		t.Parallel()
		create(t, ns, `
kind: Experiment
metadata: {name: tuning}
spec: {provider: kfp, description: first}
`)
		lifecycle(t, ns, "Experiment", "tuning", "experiment", `{"spec":{"description":"second"}}`)
	})
	t.Run("RunSchedule", func(t *testing.T) {
		t.Parallel()
		// Its own Pipeline: the Pipeline subtest deletes penguin.
		fixturePipeline(t, ns, "penguin-rs")
		create(t, ns, `
kind: RunSchedule
metadata: {name: nightly}
spec:
  provider: kfp
  pipeline: penguin-rs
  experimentName: tuning
  parameters: [{name: TRAINING_RUNS, value: "3"}]
  schedule: {cronExpression: "0 2 * * *"}
`)
		lifecycle(t, ns, "RunSchedule", "nightly", "runschedule", `{"spec":{"schedule":{"cronExpression":"0 3 * * *"}}}`)
	})
	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		// Its own Pipeline: the Pipeline subtest deletes penguin.
		fixturePipeline(t, ns, "penguin-run")
		create(t, ns, `
kind: Run
metadata: {name: once}
spec:
  provider: kfp
  pipeline: penguin-run
  experimentName: tuning
  parameters: [{name: TRAINING_RUNS, value: "1"}]
`)
		waitFor(t, syncTimeout, "Run created", func() (bool, string) { return synchronised(get(t, "Run", ns, "once")) })
		var resource struct {
			Pipeline struct{ Name, Version, ID string }
		}
		receivedJSON(t, ns, "Run", "once", "received resource ", &resource)
		assert.Equal(t, "penguin-run", resource.Pipeline.Name)
		assert.Equal(t, "pipeline/"+ns+"/penguin-run", resource.Pipeline.ID, "the provider got the pipeline's backend id")
		observed, _, _ := unstructured.NestedString(get(t, "Run", ns, "once").Object, "status", "observedPipelineVersion")
		assert.Equal(t, resource.Pipeline.Version, observed)
		assert.NotEmpty(t, observed)
		lifecycle(t, ns, "Run", "once", "run", "")
	})
	t.Run("RunConfiguration", func(t *testing.T) {
		t.Parallel()
		fixturePipeline(t, ns, "penguin-rc")
		create(t, ns, `
kind: RunConfiguration
metadata: {name: training}
spec:
  run:
    provider: kfp
    pipeline: penguin-rc
    experimentName: tuning
    parameters: [{name: TRAINING_RUNS, value: "5"}]
  triggers:
    schedules: [{cronExpression: "0 4 * * *"}]
    onChange: [runSpec]
`)
		waitFor(t, syncTimeout, "RunConfiguration synchronised", func() (bool, string) {
			return synchronised(get(t, "RunConfiguration", ns, "training"))
		})
		// Its children are resources of their own, each synchronised through Tekton.
		for _, kind := range []string{"RunSchedule", "Run"} {
			waitFor(t, syncTimeout, "the RunConfiguration's "+kind, func() (bool, string) {
				children := childrenOf(t, ns, kind, "training")
				if len(children) != 1 {
					return false, fmt.Sprintf("%d %ss owned by the RunConfiguration", len(children), kind)
				}
				return synchronised(get(t, kind, ns, children[0]))
			})
		}
		remove(t, "RunConfiguration", ns, "training")
		waitFor(t, syncTimeout, "RunConfiguration and its children gone", func() (bool, string) {
			left := len(childrenOf(t, ns, "RunSchedule", "training")) + len(childrenOf(t, ns, "Run", "training"))
			return get(t, "RunConfiguration", ns, "training") == nil && left == 0, fmt.Sprintf("%d children left", left)
		})
	})
}

// lifecycle checks a created resource through synchronisation, an update
// (unless update is empty) and deletion.
func lifecycle(t *testing.T, ns, kind, name, providerKind, update string) {
	t.Helper()
	waitFor(t, syncTimeout, kind+" created", func() (bool, string) { return synchronised(get(t, kind, ns, name)) })
	obj := get(t, kind, ns, name)
	id, _, _ := unstructured.NestedString(obj.Object, "status", "provider", "id")
	assert.Equal(t, fmt.Sprintf("%s/%s/%s", providerKind, ns, name), id, "the fixture provider's id reached status.provider.id")
	checkRuns(t, ns, kind, name, "create")

	if update != "" {
		patch(t, kind, ns, name, update)
		waitFor(t, syncTimeout, kind+" updated", func() (bool, string) { return synchronised(get(t, kind, ns, name)) })
		checkRuns(t, ns, kind, name, "update")
	}

	remove(t, kind, ns, name)
	sawDelete := false
	waitFor(t, syncTimeout, kind+" deleted through its delete operation", func() (bool, string) {
		for _, pr := range runsOf(t, ns, kind, name) {
			if pr.Labels["pipelines.kubeflow.org/operation"] == "delete" {
				sawDelete = true
			}
		}
		return get(t, kind, ns, name) == nil, "still there"
	})
	assert.True(t, sawDelete, "a delete PipelineRun ran before the resource went")
}

// checkRuns: the operation's PipelineRun succeeded, and its pods ran on the
// node as the provider's service account (a compile pod as the compiler's).
func checkRuns(t *testing.T, ns, kind, name, op string) {
	t.Helper()
	var found bool
	for _, pr := range runsOf(t, ns, kind, name) {
		if pr.Labels["pipelines.kubeflow.org/operation"] != op || succeededCondition(&pr) != "True" {
			continue
		}
		found = true
		assert.Equal(t, "kfp-provider", pr.Spec.TaskRunTemplate.ServiceAccountName)
		pods := podsOf(t, ns, pr.Name)
		require.NotEmpty(t, pods, "PipelineRun %s ran pods", pr.Name)
		for _, pod := range pods {
			if pod.Labels["tekton.dev/pipelineTask"] == "compile" {
				assert.Equal(t, "kfp-tekton-compiler", pod.Spec.ServiceAccountName, "tenant code compiles as the account with no rights")
			} else {
				assert.Equal(t, "kfp-provider", pod.Spec.ServiceAccountName)
			}
			assert.Equal(t, "kfp-node", pod.Spec.NodeName)
			// Every step ran to completion on the node (the pod's phase may lag Tekton's verdict).
			require.NotEmpty(t, pod.Status.ContainerStatuses, "pod %s", pod.Name)
			for _, c := range pod.Status.ContainerStatuses {
				if assert.NotNil(t, c.State.Terminated, "pod %s container %s finished", pod.Name, c.Name) {
					assert.Zero(t, c.State.Terminated.ExitCode, "pod %s container %s", pod.Name, c.Name)
				}
			}
		}
	}
	assert.True(t, found, "a succeeded %s PipelineRun of %s %s", op, kind, name)
}

// childrenOf lists the names of kind owned by a RunConfiguration.
func childrenOf(t *testing.T, ns, kind, owner string) []string {
	t.Helper()
	var names []string
	for _, obj := range list(t, ns, kind) {
		for _, ref := range obj.GetOwnerReferences() {
			if ref.Kind == "RunConfiguration" && ref.Name == owner {
				names = append(names, obj.GetName())
			}
		}
	}
	return names
}
