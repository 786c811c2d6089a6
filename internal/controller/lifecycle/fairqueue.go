package lifecycle

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The leader's work queue is fair between namespaces for new resources: a
// burst of 10,000 creates in one namespace takes the leader minutes to go
// over (a finalizer and a status each, at its client's rate), and first in,
// first out, another namespace's single new resource would wait for all of
// them before its first reconcile. Instead the k-th create of a namespace
// still waiting for its first reconcile is queued at priority -k: the
// namespaces' new resources take turns, round robin (the limiter shares a
// Provider's room the same way once they ask for it, internal/controller/
// inflight). Progress (PriorityProgress) still goes first, and the creates
// of the informer's initial list (a leader starting over) keep
// controller-runtime's low priority behind everything new.

// namespaceShares counts, per namespace, the creates queued and not yet
// reconciled, and the priority each was queued at.
type namespaceShares struct {
	mu      sync.Mutex
	pending map[string]int
	queued  map[types.NamespacedName]int
}

// queue returns the priority for req's create: minus the number of its
// namespace's creates already waiting. A create queued again before its
// reconcile keeps its priority (the queue keeps the higher of two).
func (s *namespaceShares) queue(req types.NamespacedName) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.queued[req]; ok {
		return p
	}
	if s.pending == nil {
		s.pending = map[string]int{}
		s.queued = map[types.NamespacedName]int{}
	}
	p := -s.pending[req.Namespace]
	s.pending[req.Namespace]++
	s.queued[req] = p
	return p
}

// started: req's reconcile began; it no longer holds a place in its
// namespace's turn.
func (s *namespaceShares) started(req types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queued[req]; !ok {
		return
	}
	delete(s.queued, req)
	if s.pending[req.Namespace]--; s.pending[req.Namespace] <= 0 {
		delete(s.pending, req.Namespace)
	}
}

// fairCreates enqueues a kind's own events: creates at their namespace's
// turn (namespaceShares), everything else as a controller's For does
// (EnqueueRequestForObject, low priority when unchanged).
type fairCreates struct {
	shares *namespaceShares
	plain  handler.EventHandler
}

func newFairCreates(shares *namespaceShares) fairCreates {
	return fairCreates{shares: shares, plain: handler.WithLowPriorityWhenUnchanged(&handler.EnqueueRequestForObject{})}
}

func (h fairCreates) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.Object == nil || e.IsInInitialList {
		h.plain.Create(ctx, e, q)
		return
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()}}
	enqueue(q, h.shares.queue(req.NamespacedName), req)
}

func (h fairCreates) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.plain.Update(ctx, e, q)
}

func (h fairCreates) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.plain.Delete(ctx, e, q)
}

func (h fairCreates) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.plain.Generic(ctx, e, q)
}
