package completion

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Expiry says when a completed Run is due for deletion under ttl; false
// while it has not completed (or ttl is off).
func Expiry(run *pipelinesv1beta1.Run, ttl time.Duration) (time.Time, bool) {
	if ttl <= 0 || run.Status.CompletionState == "" || run.Status.MarkedCompletedAt == nil ||
		len(run.Status.CompletionEvents.Pending) > 0 {
		// A Run holding undelivered events stays until the sinks have them
		// (the status write that empties its outbox brings it back here).
		return time.Time{}, false
	}
	return run.Status.MarkedCompletedAt.Add(ttl), true
}

// Retention deletes Runs runCompletionTTL after they completed; their
// deletion then removes them from the backend as any Run's does.
type Retention struct {
	Client client.Client
	TTL    time.Duration
	Now    func() time.Time
}

// Reconcile deletes the Run req names once it has been complete for the TTL.
func (r *Retention) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var run pipelinesv1beta1.Run
	if err := r.Client.Get(ctx, req.NamespacedName, &run); err != nil || !run.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	due, ok := Expiry(&run, r.TTL)
	if !ok {
		return ctrl.Result{}, nil
	}
	if wait := due.Sub(r.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	// Preconditioned on the UID: never a later Run of the same name.
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, &run, client.Preconditions{UID: &run.UID}))
}

// SetupWithManager watches Runs that have completed.
func (r *Retention) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	completed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.(*pipelinesv1beta1.Run).Status.CompletionState != ""
	})
	return ctrl.NewControllerManagedBy(mgr).Named("run-retention").
		For(&pipelinesv1beta1.Run{}, builder.WithPredicates(completed)).
		WithOptions(opts).
		Complete(r)
}
