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
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
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
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	if o, due := retention(&run, r.TTL, r.Now()); !due {
		return o.Result()
	}
	// Preconditioned on the UID: never a later Run of the same name.
	return outcome.DoneOr(client.IgnoreNotFound(r.Client.Delete(ctx, &run, client.Preconditions{UID: &run.UID}))).Result()
}

// retention says whether run is due for deletion under ttl at now, and
// otherwise how its reconcile ends: waiting for its expiry, or done (not
// complete, or still holding events: the status write that changes that
// brings it back).
func retention(run *pipelinesv1beta1.Run, ttl time.Duration, now time.Time) (o outcome.Outcome, due bool) {
	expiry, ok := Expiry(run, ttl)
	if !ok {
		return outcome.DoneOutcome(), false
	}
	if wait := expiry.Sub(now); wait > 0 {
		return outcome.WaitFor(wait), false
	}
	return outcome.DoneOutcome(), true
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
