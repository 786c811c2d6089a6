package lifecycle

import (
	"context"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// PriorityProgress is the work-queue priority of a reconcile that moves an
// operation on: its run has just ended (the owner turns Ready or starts its
// next step) or the limiter has room for it (its run starts). A burst of new
// resources fills the queue at the default priority, 0, and the leader's
// first pass over it (a finalizer and a status each) takes minutes at the
// client's rate; these go ahead, so Tekton is not left idle meanwhile and
// finished work shows as soon as it ends. Within a priority the queue stays
// first in, first out.
const PriorityProgress = 10

// endedNow: the update is the one in which the run ended.
func endedNow(before, after *tektonv1.PipelineRun) bool {
	return !before.IsDone() && after.IsDone()
}

// enqueue adds req to q at priority where q is a priority queue (the
// controllers' default), and plainly otherwise.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], priority int, req reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, req)
		return
	}
	q.Add(req)
}

// runEvents maps the operator's PipelineRuns to their owners: the update in
// which a run ends at PriorityProgress, every other event as mapped does.
type runEvents struct {
	owners handler.MapFunc
	mapped handler.EventHandler
}

func newRunEvents(owners handler.MapFunc) runEvents {
	return runEvents{owners: owners, mapped: handler.EnqueueRequestsFromMapFunc(owners)}
}

func (h runEvents) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.mapped.Create(ctx, e, q)
}

func (h runEvents) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	before, ok1 := e.ObjectOld.(*tektonv1.PipelineRun)
	after, ok2 := e.ObjectNew.(*tektonv1.PipelineRun)
	if !ok1 || !ok2 || !endedNow(before, after) {
		h.mapped.Update(ctx, e, q)
		return
	}
	for _, req := range h.owners(ctx, after) {
		enqueue(q, PriorityProgress, req)
	}
}

func (h runEvents) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.mapped.Delete(ctx, e, q)
}

func (h runEvents) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.mapped.Generic(ctx, e, q)
}
