package lifecycle_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

// writeBudget is the most API writes (POST, PUT, PATCH, DELETE: the
// operation's PipelineRun, status patches, Events) the operator may make to
// take one resource from creation to Ready=True (issue 28: the floor is
// three, the finalizer, the run and the status that says Ready). Today it
// makes four: the run, the status Progressing while the run runs, the
// status Synchronized and its Event. The finalizer costs none: the
// finalizer webhook (internal/finalizerwebhook, registered on every test
// control plane as the chart registers it) adds it at create; it cannot
// share a write with the status, which ignores metadata.
const writeBudget = 4

// queuedWriteBudget is writeBudget for a resource that waited Queued for
// room among its Provider's operations in flight: the status saying so is
// one more write (no Event: the condition says it).
const queuedWriteBudget = writeBudget + 1

// withoutWebhookBudget is writeBudget when the finalizer webhook cannot be
// reached (its policy is Ignore): the engine adds the finalizer itself.
const withoutWebhookBudget = writeBudget + 1

// TestWritesPerSynchronisedResource counts, through the operator's own
// transport, the writes each kind's resource costs from creation to
// Ready=True, with and without waiting Queued for room among the
// Provider's operations in flight, and logs them by verb and resource:
//
//	go test ./internal/controller/lifecycle -run TestWritesPerSynchronisedResource -v
func TestWritesPerSynchronisedResource(t *testing.T) {
	t.Run("each kind", func(t *testing.T) {
		writes := testenv.NewWrites()
		f := fixture.SetupWrapped(t, cp, fixture.Backoff, nil, writes.Wrap)
		p := fixture.NewPipeline(f.NS, "demo")
		e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "e"},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "counted"}}
		rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "nightly"},
			Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"},
				Schedule: pipelinesv1beta1.Schedule{CronExpression: "0 2 * * *"}}}
		r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "once"},
			Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"}}
		for _, c := range []struct {
			resource string
			obj      lifecycle.Subject
		}{{"pipelines", p}, {"experiments", e}, {"runschedules", rs}, {"runs", r}} {
			require.NoError(t, cp.Client.Create(ctx, c.obj))
			f.Finish(t, f.EventuallyRun(t, c.obj, 1, contract.OperationCreate), true, c.resource+"-id", "", "")
			f.Eventually(t, c.obj, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(c.obj))
			checkWrites(t, writes, c.resource+" "+f.NS+"/"+c.obj.GetName(), writeBudget)
		}
	})
	t.Run("an Experiment without the finalizer webhook", func(t *testing.T) {
		withoutFinalizerWebhook(t)
		writes := testenv.NewWrites()
		f := fixture.SetupWrapped(t, cp, fixture.Backoff, nil, writes.Wrap)
		e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "e"},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
		require.NoError(t, cp.Client.Create(ctx, e))
		assert.Empty(t, e.Finalizers, "created as sent")
		f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "experiment-e", "", "")
		f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))
		assert.Contains(t, e.Finalizers, pipelinesv1beta1.FinalizerBackend, "the engine added it")
		checkWrites(t, writes, "experiments "+f.NS+"/e", withoutWebhookBudget)
	})
	t.Run("an Experiment queued", func(t *testing.T) {
		writes := testenv.NewWrites()
		f := fixture.SetupWrapped(t, cp, fixture.Backoff, func(c *operator.Config) { c.MaxOperationsInFlight = 1 }, writes.Wrap)
		first := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "first"},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
		queued := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "queued"},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
		require.NoError(t, cp.Client.Create(ctx, first))
		run := f.EventuallyRun(t, first, 1, contract.OperationCreate)
		require.NoError(t, cp.Client.Create(ctx, queued))
		f.Eventually(t, queued, fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonQueued)(queued))
		f.Finish(t, run, true, "experiment-first", "", "")
		f.Finish(t, f.EventuallyRun(t, queued, 1, contract.OperationCreate), true, "experiment-queued", "", "")
		for _, c := range []struct {
			e      *pipelinesv1beta1.Experiment
			budget int
		}{{first, writeBudget}, {queued, queuedWriteBudget}} {
			f.Eventually(t, c.e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(c.e))
			checkWrites(t, writes, "experiments "+f.NS+"/"+c.e.Name, c.budget)
		}
	})
}

// withoutFinalizerWebhook removes the test control plane's finalizer
// webhook until t ends (the package's tests run one at a time).
func withoutFinalizerWebhook(t *testing.T) {
	t.Helper()
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Name: testenv.FinalizerWebhookConfiguration}, &cfg))
	require.NoError(t, cp.Client.Delete(ctx, &cfg))
	t.Cleanup(func() {
		cfg.ResourceVersion, cfg.UID = "", ""
		require.NoError(t, cp.Client.Create(ctx, &cfg))
	})
}

// checkWrites waits for subject's writes to settle (Events are sent
// asynchronously), logs them in order and checks them against budget.
func checkWrites(t *testing.T, writes *testenv.Writes, subject string, budget int) {
	t.Helper()
	counts := writes.Of(subject)
	for stable := time.Now(); time.Since(stable) < time.Second; time.Sleep(100 * time.Millisecond) {
		if now := writes.Of(subject); !reflect.DeepEqual(now, counts) {
			counts, stable = now, time.Now()
		}
	}
	t.Logf("%s: %s", subject, testenv.Breakdown(counts))
	for i, w := range writes.Sequence(subject) {
		t.Logf("  %d. %s", i+1, w)
	}
	assert.LessOrEqual(t, testenv.Total(counts), budget, "writes for %s from creation to Ready=True", subject)
}
