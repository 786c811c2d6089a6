package lifecycle_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

// With maxOperationsInFlight 2, a Provider never has more than two
// operation runs unfinished, whatever their kinds; the rest wait Queued,
// in turn (namespaces, then kinds within one, take turns; each namespace
// and kind first in first out: internal/controller/inflight tests the
// order), and start as runs end, woken without polling (the fallback
// recheck is minutes, the test's wait seconds).
func TestOperationsInFlightAreBoundedPerProvider(t *testing.T) {
	f := fixture.SetupWithConfig(t, cp, fixture.Backoff, func(c *operator.Config) { c.MaxOperationsInFlight = 2 })
	queued := fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonQueued)
	unfinished := func() int {
		list := &tektonv1.PipelineRunList{}
		require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(f.NS)))
		n := 0
		for _, pr := range list.Items {
			if !pr.IsDone() {
				n++
			}
		}
		return n
	}

	a, b, c := fixture.NewPipeline(f.NS, "a"), fixture.NewPipeline(f.NS, "b"), fixture.NewPipeline(f.NS, "c")
	require.NoError(t, cp.Client.Create(ctx, a))
	runA := f.EventuallyRun(t, a, 1, contract.OperationCreate)
	require.NoError(t, cp.Client.Create(ctx, b))
	f.EventuallyRun(t, b, 1, contract.OperationCreate)
	require.NoError(t, cp.Client.Create(ctx, c))
	f.Eventually(t, c, queued(c))
	f.Eventually(t, c, fixture.ReadyMessageContains(c, "provider "+f.NS+"/kfp has as many operations in flight as it may have now (maxOperationsInFlight, 2,", "this create starts when one of them ends"))
	assert.Equal(t, string(pipelinesv1beta1.StateCreating), fixture.Condition(c, pipelinesv1beta1.ConditionSynchronized).Reason)

	// Another kind shares the Provider's room, and queues too.
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "e"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "queued"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Eventually(t, e, queued(e))
	assert.Empty(t, f.RunsOf(t, c))
	assert.Empty(t, f.RunsOf(t, e))

	// c goes while queued: it never created anything, so it is released at
	// once, and gives its place up.
	require.NoError(t, cp.Client.Delete(ctx, c))
	require.Eventually(t, func() bool { return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(c), c)) }, fixture.Wait, fixture.Tick)
	f.Eventually(t, e, queued(e))

	// a's run ends: the room goes to e.
	f.Finish(t, runA, true, "pipeline-a", "", "")
	f.Eventually(t, a, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(a))
	f.EventuallyRun(t, e, 1, contract.OperationCreate)
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(e))
	assert.Equal(t, 2, unfinished(), "b's and e's runs")

	// A delete is an operation too: a's waits for room.
	require.NoError(t, cp.Client.Delete(ctx, a))
	f.Eventually(t, a, func(c *assert.CollectT) {
		ready := fixture.Condition(a, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, ready) {
			assert.Equal(c, pipelinesv1beta1.ReasonQueued, ready.Reason)
			assert.Contains(c, ready.Message, "this delete starts")
		}
		assert.Equal(c, string(pipelinesv1beta1.StateDeleting), fixture.Condition(a, pipelinesv1beta1.ConditionSynchronized).Reason)
	})
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "experiment-e", "", "")
	deleteA := f.EventuallyRun(t, a, 2, contract.OperationDelete)
	assert.Equal(t, 2, unfinished(), "b's create and a's delete")
	f.Finish(t, deleteA, true, "", "", "")
	require.Eventually(t, func() bool { return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(a), a)) }, fixture.Wait, fixture.Tick)
}
