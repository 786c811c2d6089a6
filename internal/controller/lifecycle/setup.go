package lifecycle

import (
	"context"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/predicates"
)

// IndexRunOwners indexes cached PipelineRuns by owner UID; call it once per
// manager, before any lifecycle controller is set up.
func IndexRunOwners(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &tektonv1.PipelineRun{}, IndexOwnerUID, func(obj client.Object) []string {
		if uid := obj.GetLabels()[LabelOwnerUID]; uid != "" {
			return []string{uid}
		}
		return nil
	})
}

// SetupWithManager registers the controller: it watches its kind, the
// PipelineRuns it created (through the manager's label-filtered cache), and
// the Providers its resources reference.
func (r *Reconciler[T]) SetupWithManager(ctx context.Context, mgr ctrl.Manager, list func() client.ObjectList, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.New(), IndexProvider, func(obj client.Object) []string {
		s := obj.(Subject)
		return []string{ProviderKey(s.ProviderReference(), s.GetNamespace()).String()}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.New(), builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicates.BeingDeleted))).
		Watches(&tektonv1.PipelineRun{}, handler.EnqueueRequestsFromMapFunc(r.ownerOf)).
		Watches(&pipelinesv1beta1.Provider{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, p client.Object) []reconcile.Request {
			l := list()
			if err := r.Client.List(ctx, l, client.MatchingFields{IndexProvider: client.ObjectKeyFromObject(p).String()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing resources of provider", "provider", client.ObjectKeyFromObject(p))
				return nil
			}
			var reqs []reconcile.Request
			_ = forEach(l, func(o client.Object) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			})
			return reqs
		})).
		WithOptions(opts).
		Named(r.Kind.Name).
		Complete(r)
}

func (r *Reconciler[T]) ownerOf(_ context.Context, pr client.Object) []reconcile.Request {
	if pr.GetLabels()[LabelOwnerKind] != r.Kind.Name {
		return nil
	}
	ns, name, ok := strings.Cut(pr.GetAnnotations()[AnnotationOwner], "/")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func forEach(list client.ObjectList, fn func(client.Object)) error {
	return meta.EachListItem(list, func(o runtime.Object) error {
		fn(o.(client.Object))
		return nil
	})
}
