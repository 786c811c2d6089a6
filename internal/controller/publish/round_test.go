package publish

// One reconcile at a time, with a fake API and a stopped clock: what a
// round tries, what it records, and when it asks to be run again.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// countingSink answers *status and lists the ids it was sent.
func countingSink(t *testing.T, status *atomic.Int32) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var ids []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("ce-id"))
		mu.Unlock()
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(s.Close)
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ids...)
	}
}

func TestARoundSkipsAFailedSinkAndWaitsForItsBackoff(t *testing.T) {
	var downStatus, upStatus atomic.Int32
	downStatus.Store(http.StatusBadGateway)
	upStatus.Store(http.StatusOK)
	down, downGot := countingSink(t, &downStatus)
	up, upGot := countingSink(t, &upStatus)
	run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train", UID: "uid-1"}}
	key, err := seal.NewKey([]byte("round-test-key-round-test-key-round"))
	require.NoError(t, err)
	for _, id := range []string{"run-1", "run-2", "run-3"} {
		ev := pipelinesv1beta1.PendingCompletionEvent{
			ID: id, Source: "team-a/kfp", Data: "{}", Time: metav1.Now(), Sinks: []string{"round-down", "round-up"}}
		key.SealEvent("Run", run, &ev)
		run.Status.CompletionEvents.Pending = append(run.Status.CompletionEvents.Pending, ev)
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithStatusSubresource(&pipelinesv1beta1.Run{}).WithObjects(run).Build()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Recorder: recorder, Now: func() time.Time { return now }, Seal: key,
		Sinks:   []Sink{{Name: "round-down", URL: down.URL}, {Name: "round-up", URL: up.URL}},
		Backoff: Backoff{Base: time.Second, Max: time.Minute}}
	require.NoError(t, r.init())
	reconcileRun := func() ctrl.Result {
		t.Helper()
		res, err := r.reconcile(context.Background(), kinds[0], ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)})
		require.NoError(t, err, "a failing sink is no reconcile error")
		require.NoError(t, c.Get(context.Background(), client.ObjectKeyFromObject(run), run))
		return res
	}

	res := reconcileRun()
	assert.Equal(t, []string{"run-1"}, downGot(), "a failed sink is not tried for the later events")
	assert.Equal(t, []string{"run-1", "run-2", "run-3"}, upGot(), "the other sink gets every event")
	assert.Equal(t, time.Second, res.RequeueAfter, "Base after the first failure")
	require.Len(t, run.Status.CompletionEvents.Pending, 3)
	for _, ev := range run.Status.CompletionEvents.Pending {
		assert.Equal(t, []string{"round-down"}, ev.Sinks, "%s: delivered to round-up, recorded", ev.ID)
	}

	res = reconcileRun()
	assert.Len(t, downGot(), 1, "not due yet: not tried")
	assert.Len(t, upGot(), 3, "nothing sent twice")
	assert.Equal(t, time.Second, res.RequeueAfter, "still the same retry time")

	for failures, wait := range []time.Duration{2 * time.Second, 4 * time.Second} {
		now = now.Add(time.Hour)
		res = reconcileRun()
		assert.Len(t, downGot(), failures+2)
		assert.Equal(t, wait, res.RequeueAfter)
	}
	cond := run.Status.Conditions
	require.Len(t, cond, 1, "False after the third failure")
	assert.Equal(t, metav1.ConditionFalse, cond[0].Status)
	assert.Len(t, recorder.Events, 1, "one Warning Event")

	downStatus.Store(http.StatusOK)
	now = now.Add(time.Hour)
	res = reconcileRun()
	assert.Zero(t, res.RequeueAfter, "nothing left to deliver")
	assert.Empty(t, run.Status.CompletionEvents.Pending)
	assert.Equal(t, []string{"run-1", "run-2", "run-3"}, run.Status.CompletionEvents.Published)
	assert.Equal(t, metav1.ConditionTrue, run.Status.Conditions[0].Status)
	assert.Empty(t, r.failures.of, "nothing remembered for a resource that owes nothing")
}
