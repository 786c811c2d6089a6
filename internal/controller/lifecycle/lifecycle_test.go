package lifecycle_test

// The engine, run with the whole operator against a real API server; the
// tests of what each kind does are in its package (internal/controller/<kind>).

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

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

func TestFailuresAreReportedAndRetriedWithBackoff(t *testing.T) {
	// Tekton's timestamps have whole seconds: a backoff of seconds is observable.
	f := fixture.SetupWithBackoff(t, cp, 2*time.Second)
	p := fixture.NewPipeline(f.NS, "flaky")
	require.NoError(t, cp.Client.Create(ctx, p))

	first := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	f.Finish(t, first, true, "", "quota exceeded in project ml", "")
	f.Eventually(t, p, func(c *assert.CollectT) {
		fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonPipelineRunFailed)(p)(c)
		if cond := fixture.Condition(p, pipelinesv1beta1.ConditionReady); cond != nil {
			assert.Contains(c, cond.Message, "provider error")
			assert.Contains(c, cond.Message, "quota exceeded in project ml")
			assert.Contains(c, cond.Message, "attempt 1; retrying in")
		}
		assert.Equal(c, string(pipelinesv1beta1.StateFailed), fixture.Condition(p, pipelinesv1beta1.ConditionSynchronized).Reason)
	})

	second := f.EventuallyRun(t, p, 2, contract.OperationCreate)
	assert.Equal(t, "1", second.Labels[contract.LabelAttempt], "the retry is a new attempt")
	assert.GreaterOrEqual(t, second.CreationTimestamp.Sub(first.Status.CompletionTime.Time), time.Second, "after the backoff")
	f.Eventually(t, p, fixture.ReadyMessageContains(p, "attempt 2; the previous one: provider error"))
	f.Finish(t, second, false, "", "", "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0")
	f.Eventually(t, p, fixture.ReadyMessageContains(p, "Failed: 1", "attempt 2"))

	third := f.EventuallyRun(t, p, 3, contract.OperationCreate)
	f.Finish(t, third, true, "pipeline-7", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

// A controller that crashed between creating the run and writing status
// finds the run it made: still exactly one.
func TestRestartCreatesNoSecondRun(t *testing.T) {
	f := fixture.Setup(t, cp)
	p := fixture.NewPipeline(f.NS, "restart")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	f.StopOperator()

	// As if the status write had never happened.
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p))
	p.Status = pipelinesv1beta1.Status{}
	require.NoError(t, cp.Client.Status().Update(ctx, p))

	f.StartOperator(t)
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(p))
	assert.Len(t, f.RunsOf(t, p), 1)
	f.Finish(t, pr, true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	assert.Len(t, f.RunsOf(t, p), 1)
}

func TestPipelineRunDeletedMidFlightIsRecreated(t *testing.T) {
	f := fixture.Setup(t, cp)
	p := fixture.NewPipeline(f.NS, "interrupted")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	require.NoError(t, cp.Client.Delete(ctx, pr))
	var again *tektonv1.PipelineRun
	require.Eventually(t, func() bool {
		runs := f.RunsOf(t, p)
		if len(runs) == 1 && runs[0].UID != pr.UID {
			again = &runs[0]
			return true
		}
		return false
	}, fixture.Wait, fixture.Tick)
	assert.Equal(t, pr.Name, again.Name, "the same operation, the same name")
	f.Finish(t, again, true, "pipeline-9", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

func TestSpecChangedWhileRunningWaitsThenSyncsTheNewest(t *testing.T) {
	f := fixture.Setup(t, cp)
	p := fixture.NewPipeline(f.NS, "busy")
	require.NoError(t, cp.Client.Create(ctx, p))
	create := f.EventuallyRun(t, p, 1, contract.OperationCreate)

	for _, v := range []string{"11", "12"} {
		fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = v })
	}
	require.Never(t, func() bool { return len(f.RunsOf(t, p)) > 1 }, time.Second, fixture.Tick, "nothing starts while an operation runs")

	f.Finish(t, create, true, "pipeline-3", "", "")
	update := f.EventuallyRun(t, p, 2, contract.OperationUpdate)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal([]byte(fixture.Params(update)[taskdef.ParamPipelineConfig]), &cfg))
	assert.Equal(t, "12", cfg["env"].([]any)[0].(map[string]any)["value"], "the newest spec")
	f.Finish(t, update, true, "pipeline-3", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	assert.Len(t, f.RunsOf(t, p), 2)
}

// A failed backend delete is retried and reported; the resource stays.
func TestFailedDeleteIsRetriedAndReported(t *testing.T) {
	f := fixture.SetupWithBackoff(t, cp, 2*time.Second)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "sticky"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "exp-1", "", "")
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))
	require.NoError(t, cp.Client.Delete(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 2, contract.OperationDelete), true, "", "experiment has runs", "")
	f.Eventually(t, e, fixture.ReadyMessageContains(e, "experiment has runs"))
	retry := f.EventuallyRun(t, e, 3, contract.OperationDelete)
	assert.Equal(t, "1", retry.Labels[contract.LabelAttempt])
	f.Eventually(t, e, fixture.ReadyMessageContains(e, "attempt 2; the previous one: provider error"))
	f.Finish(t, retry, true, "exp-1", "", "")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(e), e))
	}, fixture.Wait, fixture.Tick)
}

// A spec that goes back to an earlier version, and forward again, gets a run
// for every change (names never repeat an earlier run's).
func TestSpecRevertedAndRestoredSyncsEachTime(t *testing.T) {
	f := fixture.Setup(t, cp)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "flipflop"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "A"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "exp-1", "", "")
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))
	versions := map[string]string{"A": e.Status.Version}
	for i, d := range []string{"B", "A", "B"} {
		fixture.Update(t, f, e, func(o *pipelinesv1beta1.Experiment) { o.Spec.Description = d })
		f.Finish(t, f.EventuallyRun(t, e, i+2, contract.OperationUpdate), true, "exp-1", "", "")
		f.Eventually(t, e, func(c *assert.CollectT) {
			fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e)(c)
			if want, ok := versions[d]; ok {
				assert.Equal(c, want, e.Status.Version)
			} else {
				assert.NotEqual(c, versions["A"], e.Status.Version)
			}
		})
		versions[d] = e.Status.Version
	}
	assert.Len(t, f.RunsOf(t, e), 4)
}

// A run that succeeded without a backend id is not taken as created.
func TestSuccessWithoutAnIDIsAFailure(t *testing.T) {
	f := fixture.Setup(t, cp)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "anonymous"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "", "", "")
	f.Eventually(t, e, func(c *assert.CollectT) {
		cond := fixture.Condition(e, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Contains(c, cond.Message, "succeeded but the provider reported no id")
		}
		assert.Empty(c, e.Status.Provider.ID)
	})
}
