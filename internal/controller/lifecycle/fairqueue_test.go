package lifecycle

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func created(ns, name string, initial bool) event.CreateEvent {
	return event.CreateEvent{Object: &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		IsInInitialList: initial}
}

// position is where (0-based) want comes out of q, popping everything.
func position(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request], total int, want types.NamespacedName, onPop func(reconcile.Request)) int {
	t.Helper()
	at := -1
	for i := 0; i < total; i++ {
		req, _, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		if req.NamespacedName == want {
			at = i
		}
		onPop(req)
		q.Done(req)
	}
	return at
}

func TestANamespacesSingleCreateGoesAheadOfAnothersBurst(t *testing.T) {
	const burst = 1000
	quiet := types.NamespacedName{Namespace: "team-b", Name: "one"}
	for _, tc := range []struct {
		name string
		fair bool
		// the quiet namespace's create comes out at most this far in
		atMost int
		// and at least
		atLeast int
	}{
		// One of A's creates may be ahead of it (the first, at the same
		// priority and queued before it).
		{name: "fair", fair: true, atMost: 1},
		// Controller-runtime's own handler: first in, first out, the burst
		// first. (The test could fail: this is what fairness changes.)
		{name: "first in first out", fair: false, atLeast: burst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			q := priorityqueue.New[reconcile.Request]("fairness-" + tc.name)
			defer q.ShutDown()
			shares := &namespaceShares{}
			h := handler.WithLowPriorityWhenUnchanged(&handler.EnqueueRequestForObject{})
			if tc.fair {
				h = newFairCreates(shares)
			}
			for i := 0; i < burst; i++ {
				h.Create(ctx, created("team-a", fmt.Sprintf("burst-%d", i), false), q)
			}
			h.Create(ctx, created(quiet.Namespace, quiet.Name, false), q)
			at := position(t, q, burst+1, quiet, func(req reconcile.Request) { shares.started(req.NamespacedName) })
			if tc.fair {
				assert.LessOrEqual(t, at, tc.atMost)
			} else {
				assert.GreaterOrEqual(t, at, tc.atLeast)
			}
			assert.Empty(t, shares.pending, "every started create gave its place back")
			assert.Empty(t, shares.queued)
		})
	}
}

func TestNamespacesTakeTurns(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("turns")
	defer q.ShutDown()
	shares := &namespaceShares{}
	h := newFairCreates(shares)
	// A leader starting over lists what exists: that stays behind new work.
	h.Create(ctx, created("team-c", "old", true), q)
	for i := 0; i < 3; i++ {
		h.Create(ctx, created("team-a", fmt.Sprintf("a%d", i), false), q)
	}
	for i := 0; i < 2; i++ {
		h.Create(ctx, created("team-b", fmt.Sprintf("b%d", i), false), q)
	}
	// Queued again before its reconcile: it keeps its turn.
	h.Create(ctx, created("team-a", "a2", false), q)
	var order []string
	for i := 0; i < 6; i++ {
		req, _, _ := q.GetWithPriority()
		order = append(order, req.Name)
		shares.started(req.NamespacedName)
		q.Done(req)
	}
	assert.Equal(t, []string{"a0", "b0", "a1", "b1", "a2", "old"}, order)
}

func TestSharesOfAReconcileNotQueuedByACreate(t *testing.T) {
	s := &namespaceShares{}
	// A reconcile for a wake-up or an update holds no place: starting it
	// changes nothing.
	s.started(types.NamespacedName{Namespace: "a", Name: "x"})
	assert.Equal(t, 0, s.queue(types.NamespacedName{Namespace: "a", Name: "y"}))
	assert.Equal(t, -1, s.queue(types.NamespacedName{Namespace: "a", Name: "z"}))
	assert.Equal(t, -1, s.queue(types.NamespacedName{Namespace: "a", Name: "z"}), "queued again: the same turn")
	assert.Equal(t, 0, s.queue(types.NamespacedName{Namespace: "b", Name: "z"}))
	s.started(types.NamespacedName{Namespace: "a", Name: "y"})
	assert.Equal(t, -1, s.queue(types.NamespacedName{Namespace: "a", Name: "w"}), "one of a's still waits")
}
