// Package provider reconciles Providers: it keeps the shared Tasks applied
// once in each workflow namespace, pins the provider's images to digests and
// reports whether the Provider can run PipelineRuns.
package provider

import (
	"context"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/predicates"
)

// defaultRetryAfter is how soon a Provider waiting on something outside
// the operator's control (a service account, an image push) is looked at again.
const defaultRetryAfter = time.Minute

// Reconciler reconciles Providers.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the operator does not cache (service accounts,
	// pull secrets): caching them would mean watching every one in the cluster.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// WorkflowNamespace, when set, is where every Provider's Tasks and
	// PipelineRuns live; otherwise each Provider's own namespace.
	WorkflowNamespace string
	// Version of the operator, recorded on the Tasks it applies.
	Version string
	// RetryAfter overrides defaultRetryAfter.
	RetryAfter time.Duration
	// TektonNamespace holds Tekton's feature-flags ConfigMap (default tekton-pipelines).
	TektonNamespace string
	// Service configures the provider services of Providers with spec.serviceImage.
	Service ServiceSettings

	tasks *taskApplier
}

// WorkflowNamespaceOf is where p's Tasks and PipelineRuns live.
func (r *Reconciler) WorkflowNamespaceOf(p *pipelinesv1beta1.Provider) string {
	if r.WorkflowNamespace != "" {
		return r.WorkflowNamespace
	}
	return p.Namespace
}

// Reconcile brings one Provider's workflow namespace and status up to
// date: it observes what the Provider needs, decides what to change
// (decide.go, pure) and applies that.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &pipelinesv1beta1.Provider{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	o, err := r.observe(ctx, p)
	if err != nil {
		return outcome.Retry(err).Result()
	}
	return r.apply(ctx, p, o, decide(o)).Result()
}

// runsAsMarkedAccount says whether p runs as an account of the shared
// workflow namespace that is marked for it (AnnotationProviders).
func (r *Reconciler) runsAsMarkedAccount(p *pipelinesv1beta1.Provider) bool {
	return r.WorkflowNamespace != "" && p.Namespace != r.WorkflowNamespace
}

func (r *Reconciler) tektonNamespace() string {
	if r.TektonNamespace != "" {
		return r.TektonNamespace
	}
	return DefaultTektonNamespace
}

func (r *Reconciler) retryAfter() time.Duration {
	if r.RetryAfter > 0 {
		return r.RetryAfter
	}
	return defaultRetryAfter
}

// providersUsing lists the Providers whose workflow namespace is namespace.
func (r *Reconciler) providersUsing(ctx context.Context, namespace string) ([]pipelinesv1beta1.Provider, error) {
	list := &pipelinesv1beta1.ProviderList{}
	var opts []client.ListOption
	if r.WorkflowNamespace == "" {
		opts = append(opts, client.InNamespace(namespace))
	} else if namespace != r.WorkflowNamespace {
		return nil, nil
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// SetupWithManager registers the controller. Shared Tasks are watched
// through the manager's label-filtered cache, so an edited or deleted Task
// brings the Providers of its namespace back to restore it. The kinds that
// reference Providers are watched (creations, deletions, provider changes)
// to keep status.users current and to let a Provider being deleted go with
// its last user; the lifecycle engine registers their provider index.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	applier, err := newTaskApplier(r.Client, r.Version)
	if err != nil {
		return err
	}
	r.tasks = applier
	b := ctrl.NewControllerManagedBy(mgr).
		For(&pipelinesv1beta1.Provider{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicates.BeingDeleted))).
		Watches(&tektonv1.Task{}, handler.EnqueueRequestsFromMapFunc(r.providersForTask),
			builder.WithPredicates(predicate.NewPredicateFuncs(isManaged)))
	// A provider service's Deployment changing (becoming available, failing
	// to pull) changes its Provider's readiness.
	b = b.Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(providerOfService),
		builder.WithPredicates(predicate.NewPredicateFuncs(isManaged)))
	for _, k := range userKinds {
		b = b.Watches(k.object(), enqueueProviderOfUser())
	}
	return b.WithOptions(opts).
		Named("provider").
		Complete(r)
}

func (r *Reconciler) providersForTask(ctx context.Context, obj client.Object) []reconcile.Request {
	providers, err := r.providersUsing(ctx, obj.GetNamespace())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Providers for Task", "task", client.ObjectKeyFromObject(obj))
		return nil
	}
	reqs := make([]reconcile.Request, 0, 1)
	for _, p := range providers {
		if p.DeletionTimestamp.IsZero() {
			// One Provider suffices to restore the namespace's Tasks.
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
			break
		}
	}
	return reqs
}

// isManaged says obj is a Task the operator manages. The manager's cache
// holds only those already; the predicate keeps the controller correct
// without that configuration.
func isManaged(obj client.Object) bool {
	return obj.GetLabels()[contract.LabelManagedBy] == contract.ManagedByOperator
}
