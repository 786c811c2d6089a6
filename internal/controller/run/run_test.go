package run_test

// The Run kind, run with the whole operator against a real API server.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

// A Run through create and delete (it is never updated), each operation a
// PipelineRun of its own shared Task that Tekton would accept.
func TestCreateDelete(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	f.CreateUpdateDelete(t, "run", &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "k-run"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin:1"}}, nil)
}

func TestRunIsCancelledWhenDeletedWhileRunning(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "run"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin:0.3.1-abc", Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}}}}
	require.NoError(t, cp.Client.Create(ctx, r))
	pr := f.EventuallyRun(t, r, 1, contract.OperationCreate)
	assert.Equal(t, "kfp-run-create", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)

	require.NoError(t, cp.Client.Delete(ctx, r))
	require.Eventually(t, func() bool {
		got := &tektonv1.PipelineRun{}
		return cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), got) == nil && got.Spec.Status == tektonv1.PipelineRunSpecStatusCancelled
	}, fixture.Wait, fixture.Tick, "the running PipelineRun is cancelled")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), pr))
	f.Finish(t, pr, false, "", "", "PipelineRun was cancelled")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(r), &pipelinesv1beta1.Run{}))
	}, fixture.Wait, fixture.Tick, "nothing reached the backend: nothing to delete")
}

// Sizes: the schema refuses a value or a total that cannot fit a step's
// environment; what passes it but would still not fit once JSON-escaped is
// refused by the operator with InvalidSpec and no PipelineRun, not retried
// as runs that could never start.
func TestOversizedValuesAreRefused(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	run := func(name string, values ...string) *pipelinesv1beta1.Run {
		r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
			Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"}}
		for i, v := range values {
			r.Spec.Parameters = append(r.Spec.Parameters, pipelinesv1beta1.RuntimeParameter{Name: fmt.Sprintf("p%d", i), Value: v})
		}
		return r
	}
	err := cp.Client.Create(ctx, run("one-huge", strings.Repeat("x", 40000)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.parameters[0].value")
	err = cp.Client.Create(ctx, run("many-large", strings.Repeat("x", 30000), strings.Repeat("x", 30000), strings.Repeat("x", 30000)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may total at most 65536 bytes")

	escaped := run("escapes", strings.Repeat("<", 30000), strings.Repeat("&", 30000))
	require.NoError(t, cp.Client.Create(ctx, escaped), "60,000 bytes pass the schema")
	f.Eventually(t, escaped, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(escaped))
	assert.Contains(t, fixture.Condition(escaped, pipelinesv1beta1.ConditionReady).Message, "more than a step's environment variable can hold")
	assert.Empty(t, f.RunsOf(t, escaped), "no PipelineRun that could never start")
}

// A Run waits for the Pipeline it names, runs that pipeline's backend id
// and version, and records the version it ran.
func TestRunWaitsForItsPipeline(t *testing.T) {
	f := fixture.Setup(t, cp)
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "early"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "later"}}
	require.NoError(t, cp.Client.Create(ctx, r))
	f.Eventually(t, r, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonPipelineNotFound)(r))
	assert.Contains(t, fixture.Condition(r, pipelinesv1beta1.ConditionReady).Message, "pipeline "+f.NS+"/later does not exist")
	assert.Empty(t, f.RunsOf(t, r), "nothing reaches a backend")

	p := fixture.NewPipeline(f.NS, "later")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Eventually(t, r, fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonPipelineNotReady)(r))
	assert.Empty(t, f.RunsOf(t, r))
	f.Finish(t, f.EventuallyRun(t, p, 1, contract.OperationCreate), true, "pipeline-7", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))

	pr := f.EventuallyRun(t, r, 1, contract.OperationCreate)
	var resource struct {
		Pipeline struct{ Name, Version, ID string }
	}
	require.NoError(t, json.Unmarshal([]byte(fixture.Params(pr)[taskdef.ParamResource]), &resource))
	assert.Equal(t, "later", resource.Pipeline.Name)
	assert.Equal(t, "pipeline-7", resource.Pipeline.ID)
	assert.Equal(t, p.Status.Version, resource.Pipeline.Version)
	f.Finish(t, pr, true, "run-1", "", "")
	f.Eventually(t, r, func(c *assert.CollectT) {
		fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(r)(c)
		assert.Equal(c, p.Status.Version, r.Status.ObservedPipelineVersion)
	})
}
