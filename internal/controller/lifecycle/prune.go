package lifecycle

import (
	"context"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Pruning: a resource's finished PipelineRuns are deleted once there are
// more than a few of each operation, and all of them when it is released.
//
// What a reconcile decides from (decide.go) must survive the pruning, so
// these are always kept:
//   - every run that is not done (decide waits for it);
//   - the newest succeeded create or update: runSet.record(), the only
//     record of the backend id the engine trusts for updates and deletes;
//   - the newest succeeded delete, while the resource is being deleted
//     (it is what lets the resource go);
//   - while an operation is being retried (its newest run has not
//     succeeded), the newest failed runs of it at that version, as many as
//     the retry backoff needs to reach its maximum (7 with the defaults):
//     decide counts them to space the retries, so pruning never shortens
//     the wait between attempts.
//
// Beyond those, the newest keep finished runs of each operation stay and
// older ones go.

// prunable are the runs of a resource (oldest first) to delete, keeping the
// newest keep finished runs of each operation and every run decide needs.
// keep ≤ 0 prunes nothing.
func prunable(runs []*RunRecord, keep int, backoff Backoff, deleting bool) []*RunRecord {
	if keep <= 0 {
		return nil
	}
	s := runSet(runs)
	kept := s.needed(deleting)
	// The version each operation is being retried at (its newest run has
	// not succeeded): the failures there are what decide counts.
	retrying := map[contract.Operation]string{}
	for _, r := range s {
		if r.Succeeded {
			delete(retrying, r.Op)
		} else {
			retrying[r.Op] = r.Version
		}
	}
	finished := map[contract.Operation]int{} // finished runs of each operation seen, newest first
	failures := map[[2]string]int{}          // failed runs of each operation and version seen, newest first
	retained := backoff.steps()              // failed runs the backoff needs
	var out []*RunRecord
	for i := len(s) - 1; i >= 0; i-- {
		r := s[i]
		if !r.Done {
			continue
		}
		finished[r.Op]++
		if !r.Succeeded {
			failures[[2]string{string(r.Op), r.Version}]++
		}
		switch {
		case kept[r]:
		case finished[r.Op] <= keep:
		case !r.Succeeded && r.Version == retrying[r.Op] && failures[[2]string{string(r.Op), r.Version}] <= retained:
		default:
			out = append(out, r)
		}
	}
	return out
}

// unneeded are the runs a released resource can lose before its finalizer
// goes: all but those that make decide release it again should the
// operator stop before the finalizer is removed.
func unneeded(runs []*RunRecord) []*RunRecord {
	kept := runSet(runs).needed(true)
	var out []*RunRecord
	for _, r := range runs {
		if !kept[r] {
			out = append(out, r)
		}
	}
	return out
}

// needed are the runs that hold the resource's record: the newest
// succeeded create or update, and, while it is being deleted, the newest
// succeeded delete.
func (s runSet) needed(deleting bool) map[*RunRecord]bool {
	kept := map[*RunRecord]bool{}
	var record, deleted bool
	for i := len(s) - 1; i >= 0; i-- {
		r := s[i]
		switch {
		case !r.Succeeded:
		case (r.Op == contract.OperationCreate || r.Op == contract.OperationUpdate) && !record:
			record, kept[r] = true, true
		case r.Op == contract.OperationDelete && deleting && !deleted:
			deleted, kept[r] = true, true
		}
	}
	return kept
}

// steps is how many failures it takes for the wait after them to reach Max.
func (b Backoff) steps() int {
	n := 1
	for d := b.Base; d > 0 && d < b.Max; d *= 2 {
		n++
	}
	return n
}

// prune deletes the resource's finished runs prunable chooses. A failure
// is logged and left to a later reconcile: pruning never holds a resource.
func (r *Reconciler[T]) prune(ctx context.Context, o Observation) {
	for _, run := range prunable(o.Runs, r.KeepRunsPerOperation, r.Backoff, o.Deleting) {
		r.deleteRun(ctx, run)
	}
}

// deleteRun deletes run, the one observed (by UID): never a namesake.
func (r *Reconciler[T]) deleteRun(ctx context.Context, run *RunRecord) {
	pr := &tektonv1.PipelineRun{}
	pr.Namespace, pr.Name = run.Namespace, run.Name
	var opts []client.DeleteOption
	if run.UID != "" {
		opts = append(opts, client.Preconditions{UID: ptrTo(run.UID)})
	}
	if err := r.Client.Delete(ctx, pr, opts...); err != nil && !apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Error(err, "pruning PipelineRun (retried on a later reconcile)", "pipelineRun", client.ObjectKeyFromObject(pr))
	}
}

// deleteRuns deletes every run of obj in namespace, those not in the cache
// too.
func (r *Reconciler[T]) deleteRuns(ctx context.Context, obj Subject, namespace string) error {
	return r.Client.DeleteAllOf(ctx, &tektonv1.PipelineRun{}, client.InNamespace(namespace),
		client.MatchingLabels{contract.LabelManagedBy: contract.ManagedByOperator, contract.LabelOwnerUID: string(obj.GetUID())})
}

func ptrTo(uid types.UID) *types.UID { return &uid }
