package lifecycle_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

// failUntilNth fails the resource's runs of op one after another until the
// n-th (1-based, counting every run the resource ever had), which it returns
// unfinished.
func failUntilNth(t *testing.T, f *fixture.Fixture, obj client.Object, n int, op contract.Operation) *tektonv1.PipelineRun {
	t.Helper()
	var pr *tektonv1.PipelineRun
	for {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			runs := f.RunsOf(t, obj)
			if assert.NotEmpty(c, runs) {
				pr = &runs[len(runs)-1]
				assert.Equal(c, string(op), pr.Labels[contract.LabelOperation])
				assert.False(c, pr.IsDone(), "a new attempt")
			}
		}, fixture.Wait, fixture.Tick)
		if pr.Annotations[contract.AnnotationOrdinal] == strconv.Itoa(n) {
			return pr
		}
		f.Finish(t, pr, false, "", "", "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0")
	}
}

func ordinals(runs []tektonv1.PipelineRun) []string {
	out := []string{}
	for _, pr := range runs {
		out = append(out, pr.Labels[contract.LabelOperation]+"-"+pr.Annotations[contract.AnnotationOrdinal])
	}
	return out
}

// With keepRunsPerOperation 1, failed attempts go once the operation
// succeeded (while it is retried, the backoff's count stays: 2 failures with
// the fixture's backoff), and the succeeded create stays while updates fail.
func TestFinishedRunsArePruned(t *testing.T) {
	f := fixture.SetupWithConfig(t, cp, fixture.Backoff, func(c *operator.Config) { c.KeepRunsPerOperation = 1 })
	p := fixture.NewPipeline(f.NS, "pruned")
	require.NoError(t, cp.Client.Create(ctx, p))

	created := failUntilNth(t, f, p, 5, contract.OperationCreate)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"create-3", "create-4", "create-5"}, ordinals(f.RunsOf(t, p)),
			"the 2 failures the backoff counts, and the running attempt")
	}, fixture.Wait, fixture.Tick)
	f.Finish(t, created, true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	require.Eventually(t, func() bool { return len(f.RunsOf(t, p)) == 1 }, fixture.Wait, fixture.Tick)
	assert.Equal(t, created.Name, f.RunsOf(t, p)[0].Name, "the succeeded create is kept")

	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = "20" })
	updated := failUntilNth(t, f, p, 10, contract.OperationUpdate)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"create-5", "update-8", "update-9", "update-10"}, ordinals(f.RunsOf(t, p)),
			"the record of the backend id, the 2 failed updates the backoff counts, and the running one")
	}, fixture.Wait, fixture.Tick)
	f.Finish(t, updated, true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"create-5", "update-10"}, ordinals(f.RunsOf(t, p)), "one finished run of each operation")
	}, fixture.Wait, fixture.Tick)

	require.NoError(t, cp.Client.Delete(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 3, contract.OperationDelete), true, "", "", "")
	require.Eventually(t, gone(p), fixture.Wait, fixture.Tick)
}

// A resource using another namespace's Provider has no owner reference on
// its runs: they go when it is released.
func TestReleasedCrossNamespaceResourceLeavesNoRuns(t *testing.T) {
	// Pruning off (not the default): what remains after the release is
	// then only for the release to clean up.
	f := fixture.SetupWithConfig(t, cp, fixture.Backoff, func(c *operator.Config) { c.KeepRunsPerOperation = 0 })
	other := f.NewNamespace(t)
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) { p.Spec.AllowedNamespaces = []string{other} })

	p := fixture.NewPipeline(other, "visitor")
	p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.NS + "/kfp")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 1, contract.OperationCreate), false, "", "", "failed")
	f.Finish(t, f.EventuallyRun(t, p, 2, contract.OperationCreate), true, "pipeline-x", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	assert.Len(t, f.RunsOf(t, p), 2, "nothing pruned with keepRunsPerOperation 0")

	require.NoError(t, cp.Client.Delete(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 3, contract.OperationDelete), true, "", "", "")
	require.Eventually(t, gone(p), fixture.Wait, fixture.Tick)
	require.Eventually(t, func() bool { return len(f.RunsOf(t, p)) == 0 }, fixture.Wait, fixture.Tick,
		"no run left in the provider's namespace: %v", ordinals(f.RunsOf(t, p)))
}
