package publish_test

// The publish controllers against a real API server, delivering to
// httptest sinks: each sink gets each event once with its bytes unchanged,
// a failing sink is retried until it takes the event (the condition says
// so meanwhile), and events for sinks no longer configured are dropped
// without a request.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/publish"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

// testSeal is the publisher's key; tests seal the events they queue as the
// operator would.
var testSeal = func() *seal.Key {
	k, err := seal.NewKey([]byte("publish-test-key-publish-test-key"))
	if err != nil {
		panic(err)
	}
	return k
}()

// sealAll seals events as queued in obj's outbox.
func sealAll(kind string, obj metav1.Object, events []pipelinesv1beta1.PendingCompletionEvent) {
	for i := range events {
		testSeal.SealEvent(kind, obj, &events[i])
	}
}

const (
	wait = 20 * time.Second
	tick = 20 * time.Millisecond
)

// request is one request a test sink answered.
type request struct {
	header http.Header
	body   string
	status int
}

// testSink is an HTTP sink that answers with the status the test sets
// (200 at first) and records every request.
type testSink struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []request
}

func newTestSink(t *testing.T) *testSink {
	s := &testSink{}
	s.status.Store(http.StatusOK)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := int(s.status.Load())
		s.mu.Lock()
		s.got = append(s.got, request{header: r.Header.Clone(), body: string(body), status: status})
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests are those answered with status (any status when 0).
func (s *testSink) requests(status int) []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []request
	for _, r := range s.got {
		if status == 0 || r.status == status {
			out = append(out, r)
		}
	}
	return out
}

// startPublisher runs the publish controllers for the resources of ns,
// with quick retries, until the test ends or stop is called; stop returns
// once no reconcile runs any more.
func startPublisher(t *testing.T, ns string, sinks ...publish.Sink) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 cp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	require.NoError(t, err)
	r := &publish.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("publish-test"),
		Sinks: sinks, Backoff: publish.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond},
		Seal: testSeal,
	}
	skipNameValidation := true
	require.NoError(t, r.SetupWithManager(mgr, controller.Options{SkipNameValidation: &skipNameValidation}))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return stop
}

func newNamespace(t *testing.T) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "publish-"}}
	require.NoError(t, cp.Client.Create(ctx, ns))
	return ns.Name
}

func pending(id, data string, sinks ...string) pipelinesv1beta1.PendingCompletionEvent {
	return pipelinesv1beta1.PendingCompletionEvent{ID: id, Source: "team-a/kfp", Data: data, Sinks: sinks,
		Time: metav1.NewTime(time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC))}
}

// newRun creates a Run whose outbox holds events.
func newRun(t *testing.T, ns, name string, events ...pipelinesv1beta1.PendingCompletionEvent) *pipelinesv1beta1.Run {
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"}}
	require.NoError(t, cp.Client.Create(ctx, r))
	sealAll("Run", r, events)
	r.Status.CompletionEvents.Pending = events
	require.NoError(t, cp.Client.Status().Update(ctx, r))
	return r
}

// eventually polls obj until check holds.
func eventually(t *testing.T, obj client.Object, check func(c *assert.CollectT)) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if assert.NoError(c, cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)) {
			check(c)
		}
	}, wait, tick)
}

// metricValue is a delivery metric of sink in the registry /metrics serves.
func metricValue(t *testing.T, name, sink string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "sink" && l.GetValue() == sink {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

func TestEachSinkGetsEachEventOnceWithItsBytesUnchanged(t *testing.T) {
	ns := newNamespace(t)
	alpha, beta := newTestSink(t), newTestSink(t)
	deliveredBefore := map[string]float64{
		"once-alpha": metricValue(t, "kfp_tekton_operator_cloudevents_delivered_total", "once-alpha"),
		"once-beta":  metricValue(t, "kfp_tekton_operator_cloudevents_delivered_total", "once-beta"),
	}
	stop := startPublisher(t, ns, publish.Sink{Name: "once-alpha", URL: alpha.URL}, publish.Sink{Name: "once-beta", URL: beta.URL})
	// Spacing, key order, raw and escaped HTML characters and unicode that
	// re-encoding the JSON would change.
	data := map[string]string{
		"run-1": "{\n  \"runId\": \"run-1\",\n  \"note\": \"costs $$5 <&> ünïcødé 🚀\\nsecond line\"\n}",
		"run-2": `{"runId":"run-2","html":"\u003cb\u003e <b>&amp;</b>","cmd":"echo $$(date) && exit"}` + "\n",
	}
	run := newRun(t, ns, "train",
		pending("run-1", data["run-1"], "once-alpha", "once-beta"),
		pending("run-2", data["run-2"], "once-alpha", "once-beta"))

	eventually(t, run, func(c *assert.CollectT) {
		assert.Empty(c, run.Status.CompletionEvents.Pending)
		assert.Equal(c, []string{"run-1", "run-2"}, run.Status.CompletionEvents.Published)
	})
	stop()
	for name, sink := range map[string]*testSink{"once-alpha": alpha, "once-beta": beta} {
		got := sink.requests(0)
		require.Len(t, got, 2, "%s gets each event once", name)
		for i, id := range []string{"run-1", "run-2"} {
			h := got[i].header
			assert.Equal(t, id, h.Get("ce-id"), "%s: events in order", name)
			assert.Equal(t, "org.kubeflow.pipelines.run-completion", h.Get("ce-type"))
			assert.Equal(t, "team-a/kfp", h.Get("ce-source"))
			assert.Equal(t, "1.0", h.Get("ce-specversion"))
			assert.Equal(t, "2026-05-01T12:30:00Z", h.Get("ce-time"))
			assert.Equal(t, "Run "+ns+"/train", h.Get("ce-kfpresource"))
			assert.Equal(t, "application/json", h.Get("Content-Type"))
			assert.Equal(t, data[id], got[i].body, "%s: the stored bytes of %s", name, id)
		}
		assert.Equal(t, 2.0, metricValue(t, "kfp_tekton_operator_cloudevents_delivered_total", name)-deliveredBefore[name])
	}
	assert.Nil(t, meta.FindStatusCondition(run.Status.Conditions, pipelinesv1beta1.ConditionCompletionEventsDelivered),
		"no condition while no sink failed")
}

func TestAFailingSinkIsRetriedUntilItTakesTheEvent(t *testing.T) {
	ns := newNamespace(t)
	flaky, steady := newTestSink(t), newTestSink(t)
	flaky.status.Store(http.StatusServiceUnavailable)
	failuresBefore := metricValue(t, "kfp_tekton_operator_cloudevents_delivery_failures_total", "retry-flaky")
	deliveredBefore := metricValue(t, "kfp_tekton_operator_cloudevents_delivered_total", "retry-flaky")
	stop := startPublisher(t, ns, publish.Sink{Name: "retry-flaky", URL: flaky.URL}, publish.Sink{Name: "retry-steady", URL: steady.URL})
	data := `{"runId":"run-1","status":"succeeded"}`
	run := newRun(t, ns, "train", pending("run-1", data, "retry-flaky", "retry-steady"))

	eventually(t, run, func(c *assert.CollectT) {
		assert.Len(c, steady.requests(http.StatusOK), 1, "the failing sink holds back no other")
		cond := meta.FindStatusCondition(run.Status.Conditions, pipelinesv1beta1.ConditionCompletionEventsDelivered)
		if assert.NotNil(c, cond) {
			assert.Equal(c, metav1.ConditionFalse, cond.Status)
			assert.Equal(c, pipelinesv1beta1.ReasonSinkFailing, cond.Reason)
			assert.Contains(c, cond.Message, `sink "retry-flaky" failed 3 consecutive deliveries`)
			assert.Contains(c, cond.Message, "HTTP 503")
			assert.Equal(c, run.Generation, cond.ObservedGeneration)
		}
		assert.Equal(c, []string{"retry-flaky"}, run.Status.CompletionEvents.Pending[0].Sinks)
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, sinkFailingEvents(t, run), 1, "a Warning Event when it turns False")
	}, wait, tick)

	// Retries go on without writing the status each time.
	written := run.ResourceVersion
	failed := len(flaky.requests(http.StatusServiceUnavailable))
	require.Eventually(t, func() bool { return len(flaky.requests(http.StatusServiceUnavailable)) >= failed+3 }, wait, tick)
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(run), run))
	assert.Equal(t, written, run.ResourceVersion, "no status write per retry")
	assert.GreaterOrEqual(t, metricValue(t, "kfp_tekton_operator_cloudevent_sink_consecutive_failures", "retry-flaky"), 6.0)

	flaky.status.Store(http.StatusOK)
	eventually(t, run, func(c *assert.CollectT) {
		assert.Empty(c, run.Status.CompletionEvents.Pending)
		assert.Equal(c, []string{"run-1"}, run.Status.CompletionEvents.Published)
		cond := meta.FindStatusCondition(run.Status.Conditions, pipelinesv1beta1.ConditionCompletionEventsDelivered)
		if assert.NotNil(c, cond) {
			assert.Equal(c, metav1.ConditionTrue, cond.Status)
			assert.Equal(c, pipelinesv1beta1.ReasonEventsDelivered, cond.Reason)
		}
	})
	stop()
	took := flaky.requests(http.StatusOK)
	require.Len(t, took, 1, "the event arrives once it is taken")
	assert.Equal(t, data, took[0].body)
	assert.Equal(t, "run-1", took[0].header.Get("ce-id"))
	assert.Len(t, steady.requests(0), 1)
	assert.Len(t, sinkFailingEvents(t, run), 1, "one Warning Event for the whole outage")
	failures := float64(len(flaky.requests(http.StatusServiceUnavailable)))
	assert.Equal(t, failures, metricValue(t, "kfp_tekton_operator_cloudevents_delivery_failures_total", "retry-flaky")-failuresBefore)
	assert.Equal(t, 1.0, metricValue(t, "kfp_tekton_operator_cloudevents_delivered_total", "retry-flaky")-deliveredBefore)
	assert.Equal(t, 0.0, metricValue(t, "kfp_tekton_operator_cloudevent_sink_consecutive_failures", "retry-flaky"), "reset on success")
}

// sinkFailingEvents are the Events about run with reason SinkFailing.
func sinkFailingEvents(t *testing.T, run *pipelinesv1beta1.Run) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, cp.Client.List(ctx, &list, client.InNamespace(run.Namespace)))
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.UID == run.UID && e.Reason == pipelinesv1beta1.ReasonSinkFailing {
			assert.Equal(t, corev1.EventTypeWarning, e.Type)
			assert.Nil(t, e.Series, "emitted once, not repeated")
			out = append(out, e)
		}
	}
	return out
}

func TestEventsForRemovedSinksArePublishedWithoutARequest(t *testing.T) {
	ns := newNamespace(t)
	current := newTestSink(t)
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"}}}
	require.NoError(t, cp.Client.Create(ctx, rc))
	rc.Status.CompletionEvents.Pending = []pipelinesv1beta1.PendingCompletionEvent{pending("nightly-1", `{"runId":"nightly-1"}`, "retired")}
	sealAll("RunConfiguration", rc, rc.Status.CompletionEvents.Pending)
	require.NoError(t, cp.Client.Status().Update(ctx, rc))

	stop := startPublisher(t, ns, publish.Sink{Name: "removed-current", URL: current.URL})
	eventually(t, rc, func(c *assert.CollectT) {
		assert.Empty(c, rc.Status.CompletionEvents.Pending)
		assert.Equal(c, []string{"nightly-1"}, rc.Status.CompletionEvents.Published)
	})
	stop()
	assert.Empty(t, current.requests(0), "no sink asked for it")
}

// An event written into the outbox by anyone but the operator (its seal
// missing, or made for other data or another resource) is dropped unsent:
// neither delivered nor counted as published.
func TestEventsTheOperatorDidNotQueueAreNeverSent(t *testing.T) {
	ns := newNamespace(t)
	s := newTestSink(t)
	run := newRun(t, ns, "forged", pending("genuine", `{"runId":"genuine"}`, "a"))
	other := newRun(t, ns, "other", pending("copied", `{"runId":"copied"}`, "a"))

	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(run), run))
	unsealed := pending("unsealed", `{"runId":"unsealed","status":"succeeded"}`, "a")
	tampered := pending("tampered", `{"runId":"tampered"}`, "a")
	testSeal.SealEvent("Run", run, &tampered)
	tampered.Data = `{"runId":"tampered","servingModelArtifacts":[{"name":"m","location":"s3://attacker/m"}]}`
	noSinks := pending("no-sinks", `{"runId":"no-sinks"}`)
	noSinks.Sinks = []string{}                         // all delivered, as a forger would claim
	copied := other.Status.CompletionEvents.Pending[0] // sealed for the other Run
	copied.ID = "copied-here"
	run.Status.CompletionEvents.Pending = append(run.Status.CompletionEvents.Pending, unsealed, tampered, noSinks, copied)
	require.NoError(t, cp.Client.Status().Update(ctx, run))

	startPublisher(t, ns, publish.Sink{Name: "a", URL: s.URL})
	eventually(t, run, func(c *assert.CollectT) {
		assert.Empty(c, run.Status.CompletionEvents.Pending)
		assert.Equal(c, []string{"genuine"}, run.Status.CompletionEvents.Published, "only the operator's event is published")
	})
	eventually(t, other, func(c *assert.CollectT) { assert.Equal(c, []string{"copied"}, other.Status.CompletionEvents.Published) })
	var ids []string
	for _, r := range s.requests(0) {
		ids = append(ids, r.header.Get("Ce-Id"))
	}
	assert.ElementsMatch(t, []string{"genuine", "copied"}, ids, "the sink received only the events the operator queued")
}
