package lifecycle

import (
	"context"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/predicates"
)

// IndexRunOwners indexes cached PipelineRuns by owner UID; call it once per
// manager, before any lifecycle controller is set up. It stays here beside
// its only reader (runsOf), as every index is registered beside what reads
// it (their names are in internal/contract). It is not in SetupWithManager:
// every kind's controller shares the PipelineRun informer, and an index
// registered twice is refused.
func IndexRunOwners(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &tektonv1.PipelineRun{}, contract.IndexOwnerUID, func(obj client.Object) []string {
		if uid := obj.GetLabels()[contract.LabelOwnerUID]; uid != "" {
			return []string{uid}
		}
		return nil
	})
}

// SetupWithManager registers the controller: it watches its kind, the
// PipelineRuns it created (through the manager's label-filtered cache), and
// the Providers its resources reference.
func (r *Reconciler[T]) SetupWithManager(ctx context.Context, mgr ctrl.Manager, list func() client.ObjectList, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.New(), contract.IndexProvider, func(obj client.Object) []string {
		s := obj.(Subject)
		return []string{pipelinesv1beta1.ProviderKey(s.ProviderReference(), s.GetNamespace()).String()}
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		// Its own kind as For would, but new resources queued fairly between
		// namespaces (fairqueue.go).
		Watches(r.Kind.New(), newFairCreates(&r.shares), builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicates.BeingDeleted))).
		Watches(&tektonv1.PipelineRun{}, newRunEvents(r.ownerOf)).
		Watches(&pipelinesv1beta1.Provider{}, handler.EnqueueRequestsFromMapFunc(r.usersOf(list, contract.IndexProvider)),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return !onlyUsersChanged(e.ObjectOld.(*pipelinesv1beta1.Provider), e.ObjectNew.(*pipelinesv1beta1.Provider))
			}}))
	traits := r.Kind.Traits()
	if traits.RunsPipeline {
		if err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.New(), contract.IndexPipeline, func(obj client.Object) []string {
			name, _, _ := strings.Cut(string(r.Kind.Inputs(obj.(T)).Pipeline), ":")
			return []string{obj.GetNamespace() + "/" + name}
		}); err != nil {
			return err
		}
		b = b.Watches(&pipelinesv1beta1.Pipeline{}, handler.EnqueueRequestsFromMapFunc(r.usersOf(list, contract.IndexPipeline)))
	}
	if traits.ResolvesParameters {
		if err := mgr.GetFieldIndexer().IndexField(ctx, r.Kind.New(), contract.IndexDependency, func(obj client.Object) []string {
			var keys []string
			for _, name := range pipelinesv1beta1.DependencyNames(r.Kind.Inputs(obj.(T)).Parameters) {
				keys = append(keys, obj.GetNamespace()+"/"+name)
			}
			return keys
		}); err != nil {
			return err
		}
		// Only a new latest succeeded run can resolve what a run waits for.
		b = b.Watches(&pipelinesv1beta1.RunConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.usersOf(list, contract.IndexDependency)),
			builder.WithPredicates(predicates.LatestRunsChanged))
	}
	if r.Limiter != nil {
		b = b.WatchesRawSource(r.watchQueue())
	}
	return b.WithOptions(opts).Named(traits.Name).Complete(r)
}

// usersOf maps a Provider or Pipeline to the resources referencing it
// (through index, keyed "namespace/name").
func (r *Reconciler[T]) usersOf(list func() client.ObjectList, index string) handler.MapFunc {
	return func(ctx context.Context, referenced client.Object) []reconcile.Request {
		l := list()
		if err := r.Client.List(ctx, l, client.MatchingFields{index: client.ObjectKeyFromObject(referenced).String()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing resources referencing", "object", client.ObjectKeyFromObject(referenced))
			return nil
		}
		var reqs []reconcile.Request
		_ = forEach(l, func(o client.Object) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		})
		return reqs
	}
}

func (r *Reconciler[T]) ownerOf(_ context.Context, pr client.Object) []reconcile.Request {
	if pr.GetLabels()[contract.LabelOwnerKind] != r.Kind.Traits().Name {
		return nil
	}
	ns, name, ok := strings.Cut(pr.GetAnnotations()[contract.AnnotationOwner], "/")
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

// onlyUsersChanged: the Provider update changed nothing but status.users
// (which moves with every resource created or deleted), so its users have
// nothing new to see; waking them all would cost O(N²) reconciles for N.
func onlyUsersChanged(old, updated *pipelinesv1beta1.Provider) bool {
	a, b := old.DeepCopy(), updated.DeepCopy()
	a.Status.Users, b.Status.Users = nil, nil
	a.ResourceVersion, b.ResourceVersion = "", ""
	a.ManagedFields, b.ManagedFields = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}
