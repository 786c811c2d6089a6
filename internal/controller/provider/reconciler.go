// Package provider reconciles Providers: it keeps the shared Tasks applied
// once in each workflow namespace, pins the provider's images to digests and
// reports whether the Provider can run PipelineRuns.
package provider

import (
	"context"
	"errors"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/predicates"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
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

// Reconcile brings one Provider's workflow namespace and status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &pipelinesv1beta1.Provider{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	namespace := r.WorkflowNamespaceOf(p)
	users, err := r.usersOf(ctx, client.ObjectKeyFromObject(p), p.Spec.AllowedNamespaces)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, p, namespace, users)
	}
	if err := status.AddFinalizer(ctx, r.Client, p, pipelinesv1beta1.FinalizerSharedTasks); err != nil {
		return ctrl.Result{}, err
	}

	o := observation{workflowNamespace: namespace, tasks: r.tasks.names(), users: users}
	_, o.tasksErr = r.tasks.ensure(ctx, namespace)
	keychain, saErr := serviceAccountKeychain(ctx, r.APIReader, namespace, p.Spec.ServiceAccount)
	if saErr == nil {
		saErr = checkWorkflowServiceAccount(ctx, r.APIReader, r.WorkflowNamespace, p)
		if saErr != nil && !errors.Is(saErr, errServiceAccountNotAllowed) {
			return ctrl.Result{}, saErr // transient: back off
		}
	}
	o.serviceAccountErr = saErr
	var pinned string
	if keychain != nil {
		if imagesCurrent(p) {
			pinned, o.frameworks = pinnedImage(p), p.Status.Frameworks
		} else {
			pinned, o.frameworks, o.imageErr = resolveImages(ctx, p.Spec, keychain)
		}
	} else {
		o.imageErr = saErr
	}
	o.image = pinned
	if p.Spec.ServiceImage != "" {
		// The provider step runs the helper, which calls the service.
		o.serviceImage, o.image = pinned, r.Service.HelperImage
		switch {
		case errors.Is(o.serviceAccountErr, errServiceAccountNotAllowed):
			// No longer allowed to run as that account: stop running as it.
			if err := r.removeService(ctx, p, namespace); err != nil {
				return ctrl.Result{}, err
			}
		case o.imageErr == nil && o.serviceAccountErr == nil && o.tasksErr == nil:
			// Refused pod settings leave a service applied before as it was
			// (its own were admitted), no longer called (no serviceURL).
			if o.podTemplateErr = podTemplateProblem(p, r.runsAsMarkedAccount(p)); o.podTemplateErr == nil {
				o.serviceURL, o.serviceNotReady, o.serviceErr = r.ensureService(ctx, p, namespace, pinned)
			}
		}
	} else if err := r.removeService(ctx, p, namespace); err != nil {
		return ctrl.Result{}, err
	}

	podSecurity, podSecurityErr := checkPodSecurity(ctx, r.APIReader, namespace, r.tektonNamespace())
	o.podSecurity = podSecurity

	if err := r.writeStatus(ctx, p, desiredStatus(p, o)); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case o.tasksErr != nil && !apierrors.IsNotFound(o.tasksErr):
		return ctrl.Result{}, o.tasksErr // transient: back off
	case podSecurityErr != nil:
		return ctrl.Result{}, podSecurityErr
	// Tekton's flags are not watched: a fixed flag is noticed at the next retry.
	case o.tasksErr != nil, o.serviceAccountErr != nil, o.imageErr != nil, o.podSecurity != "", o.serviceErr != nil, o.serviceNotReady != "":
		return ctrl.Result{RequeueAfter: r.retryAfter()}, nil
	case r.runsAsMarkedAccount(p):
		// Service accounts are not watched (that would mean reading every
		// account of the shared namespace): a mark the platform engineer
		// removes is found at the next check, within RetryAfter.
		return ctrl.Result{RequeueAfter: r.retryAfter()}, nil
	}
	return ctrl.Result{}, nil
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

// writeStatus patches the status when it changed, and records an Event when
// readiness changed.
func (r *Reconciler) writeStatus(ctx context.Context, p *pipelinesv1beta1.Provider, desired pipelinesv1beta1.ProviderStatus) error {
	base := p.DeepCopy()
	p.Status = desired
	w := status.Writer{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(*pipelinesv1beta1.Provider).Status.Conditions
	}}
	return w.Patch(ctx, base, p)
}

// finalize keeps p while resources still reference it (they need it, and
// its shared Tasks, to delete their backend objects), saying so; then
// removes the shared Tasks when p is the last Provider using its workflow
// namespace, and lets p go. The watches on the referencing kinds bring p
// back as they go.
func (r *Reconciler) finalize(ctx context.Context, p *pipelinesv1beta1.Provider, namespace string, users []usage) error {
	if !controllerutil.ContainsFinalizer(p, pipelinesv1beta1.FinalizerSharedTasks) {
		return nil
	}
	if len(users) > 0 {
		return r.writeStatus(ctx, p, inUseStatus(p, users))
	}
	if terminating, err := lifecycle.NamespaceTerminating(ctx, r.APIReader, namespace); err != nil || terminating {
		// Its Tasks and service go with the namespace, as do the operator's
		// rights there: removing them would fail forever.
		if err != nil {
			return err
		}
		return status.RemoveFinalizer(ctx, r.Client, p, pipelinesv1beta1.FinalizerSharedTasks)
	}
	others, err := r.providersUsing(ctx, namespace)
	if err != nil {
		return err
	}
	remaining := 0
	for _, o := range others {
		if o.UID != p.UID && o.DeletionTimestamp.IsZero() {
			remaining++
		}
	}
	if err := r.removeService(ctx, p, namespace); err != nil {
		return err
	}
	if remaining == 0 {
		if err := r.tasks.remove(ctx, namespace); err != nil {
			return err
		}
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "TasksRemoved", "Finalize",
			"last Provider using namespace %s: shared Tasks removed", namespace)
	}
	return status.RemoveFinalizer(ctx, r.Client, p, pipelinesv1beta1.FinalizerSharedTasks)
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
