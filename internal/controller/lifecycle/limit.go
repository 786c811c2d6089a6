package lifecycle

import (
	"context"
	"errors"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/inflight"
)

// NewLimiter bounds the operations in flight per Provider to limit, for
// every lifecycle controller of mgr (give it to each Reconciler); call it
// once per manager, before they are set up. slowdown adapts each
// Provider's bound to how long its runs take in Tekton (0: fixed).
// workflowNamespace is the operator's shared one, or "" when each
// Provider's runs live in its own.
func NewLimiter(ctx context.Context, mgr ctrl.Manager, limit, slowdown int, workflowNamespace string) (*inflight.Limiter, error) {
	counts := func(pr *tektonv1.PipelineRun) bool { return countsForItsProvider(pr, workflowNamespace) }
	if err := mgr.GetFieldIndexer().IndexField(ctx, &tektonv1.PipelineRun{}, contract.IndexUnfinishedProvider, func(obj client.Object) []string {
		if pr := obj.(*tektonv1.PipelineRun); counts(pr) && !pr.IsDone() {
			return []string{runProvider(pr)}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	limiter := inflight.New(limit, cachedRuns{mgr.GetCache()}, time.Now).AdaptToOperations(slowdown)
	informer, err := mgr.GetCache().GetInformer(ctx, &tektonv1.PipelineRun{})
	if err != nil {
		return nil, err
	}
	// A run that ends or goes makes room for its Provider's next waiter; so
	// does one the cache first shows finished (after a watch gap). On a
	// replica that is not leading no one waits, and this costs nothing.
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pr, ok := obj.(*tektonv1.PipelineRun); ok && counts(pr) && pr.IsDone() {
				limiter.Wake(ctx, runProvider(pr))
			}
		},
		UpdateFunc: func(old, updated any) {
			before, ok1 := old.(*tektonv1.PipelineRun)
			after, ok2 := updated.(*tektonv1.PipelineRun)
			if !ok1 || !ok2 || !counts(after) {
				return
			}
			if endedNow(before, after) {
				if o, ok := operationOf(after); ok {
					limiter.Observe(ctx, runProvider(after), o)
				}
				limiter.Wake(ctx, runProvider(after))
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pr, ok := obj.(*tektonv1.PipelineRun); ok && counts(pr) {
				limiter.Wake(ctx, runProvider(pr))
			}
		},
	})
	return limiter, err
}

// operationOf is what an ended operation run tells the limiter: which
// operation, and its time in Tekton. A run without a completion time (one
// cancelled before it started) tells nothing.
func operationOf(pr *tektonv1.PipelineRun) (inflight.Operation, bool) {
	if pr.Status.CompletionTime == nil {
		return inflight.Operation{}, false
	}
	created := pr.CreationTimestamp.Time
	return inflight.Operation{Name: pr.Labels[contract.LabelOperation], Created: created, Took: pr.Status.CompletionTime.Sub(created)}, true
}

// isOperation: pr is one of the operator's operation runs (not an ML run
// of the Tekton provider, which the same cache holds).
func isOperation(pr *tektonv1.PipelineRun) bool {
	return pr.Labels[contract.LabelManagedBy] == contract.ManagedByOperator && pr.Labels[contract.LabelOperation] != ""
}

// countsForItsProvider: pr is an operation run where its Provider's runs
// live (the shared workflow namespace, or the Provider's own). Labels and
// annotations are anyone's to write in their own namespace: a run elsewhere
// naming a Provider is no operation of it, and must not take its room.
func countsForItsProvider(pr *tektonv1.PipelineRun, workflowNamespace string) bool {
	if !isOperation(pr) {
		return false
	}
	if workflowNamespace != "" {
		return pr.Namespace == workflowNamespace
	}
	providerNamespace, _, _ := strings.Cut(runProvider(pr), "/")
	return pr.Namespace == providerNamespace
}

// cachedRuns reads the limiter's counts from the manager's cache.
type cachedRuns struct{ cache client.Reader }

func (c cachedRuns) Unfinished(ctx context.Context, provider string) ([]types.NamespacedName, error) {
	list := &tektonv1.PipelineRunList{}
	// Read only, and up to the limit of them on every admission: no copies.
	if err := c.cache.List(ctx, list, client.MatchingFields{contract.IndexUnfinishedProvider: provider}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	runs := make([]types.NamespacedName, len(list.Items))
	for i := range list.Items {
		runs[i] = client.ObjectKeyFromObject(&list.Items[i])
	}
	return runs, nil
}

func (c cachedRuns) Ended(ctx context.Context, run types.NamespacedName) (bool, error) {
	pr := &tektonv1.PipelineRun{}
	switch err := c.cache.Get(ctx, run, pr, client.UnsafeDisableDeepCopy); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return pr.IsDone(), nil
}

// waiterKey names a resource of this kind in the limiter's queues.
func (r *Reconciler[T]) waiterKey(key types.NamespacedName) string {
	return r.Kind.Traits().Name + "/" + key.String()
}

// admit asks the limiter for room for run, which obj is about to start;
// without a limiter there is always room.
func (r *Reconciler[T]) admit(ctx context.Context, obj T, o Observation, run types.NamespacedName) (inflight.Admission, error) {
	if r.Limiter == nil {
		return inflight.Admission{Admitted: true}, nil
	}
	key := client.ObjectKeyFromObject(obj)
	return r.Limiter.Acquire(ctx, o.ProviderKey.String(), inflight.Waiter{Key: r.waiterKey(key), Wake: func() { r.wake(key) }}, run)
}

// wake queues the resource key, which the limiter now has room for, ahead
// of those that have not asked yet.
func (r *Reconciler[T]) wake(key types.NamespacedName) {
	if q := r.queue.Load(); q != nil {
		enqueue(*q, PriorityProgress, reconcile.Request{NamespacedName: key})
	}
}

// runKey names the run a would start.
func runKey(o Observation, a Action) types.NamespacedName {
	return types.NamespacedName{Namespace: o.WorkflowNamespace, Name: RunName(o.Traits.Name, o.Subject, a.Op, a.Version, a.Ordinal)}
}

// mayHaveCreated: after startRun failed with err, its run may exist all the
// same (an answer lost to a timeout, a name found taken), so its room stays
// taken until the cache shows the run or the limiter's grace ends. Only a
// run never sent, or one the API server refused (4xx), surely does not.
func mayHaveCreated(err error) bool {
	var (
		prob     *problem
		spec     *specError
		internal *internalError
		refusal  *createRefusal
		status   apierrors.APIStatus
	)
	switch {
	case errors.As(err, &prob), errors.As(err, &spec), errors.As(err, &internal):
		return false
	case errors.As(err, &refusal) && errors.As(refusal.err, &status):
		// A name taken by a run not made for it (409) is a refusal too.
		code := status.Status().Code
		return code < 400 || code >= 500
	}
	return true
}

// giveBack returns the room admit gave for run, which was not created.
func (r *Reconciler[T]) giveBack(ctx context.Context, o Observation, run types.NamespacedName) {
	if r.Limiter != nil {
		r.Limiter.Release(ctx, o.ProviderKey.String(), run)
	}
}

// forgetWaiter takes the resource out of the limiter's queue, if it waits
// there: it is gone, or no longer needs to start an operation.
func (r *Reconciler[T]) forgetWaiter(ctx context.Context, key types.NamespacedName) {
	if r.Limiter != nil {
		r.Limiter.Forget(ctx, r.waiterKey(key))
	}
}

// watchQueue keeps the controller's queue for the limiter's wake-ups.
func (r *Reconciler[T]) watchQueue() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.queue.Store(&q)
		return nil
	})
}
