// Package lifecycle is the engine every user-resource controller shares: it
// turns create, update and delete of a resource into PipelineRuns of the
// operation's shape in the provider's workflow namespace, waits for them, and
// carries their results into the resource's status. Each kind contributes
// only a Kind: how to version its spec and which extra params it needs.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
)

// Subject is a user resource the engine reconciles.
type Subject interface {
	client.Object
	CommonStatus() *pipelinesv1beta1.Status
	ProviderReference() pipelinesv1beta1.ProviderReference
}

// Kind adapts one resource kind to the engine.
type Kind[T Subject] struct {
	// Name is the kind as the shared Tasks and labels name it ("pipeline").
	Name string
	New  func() T
	// Version identifies obj's desired state with provider p; a change
	// means an update operation. It errs only for specs p cannot serve.
	Version func(obj T, p *pipelinesv1beta1.Provider) (string, error)
	// ArtifactRef is obj's explicit artifact repository, if any.
	ArtifactRef func(obj T) *pipelinesv1beta1.ArtifactRepositoryRef
	// Params are extra params for op (compile inputs), nil for none.
	Params func(obj T, p *pipelinesv1beta1.Provider, op string, artifacts *ArtifactLocation) (tektonv1.Params, error)
	// CreateOnly kinds never update in the backend (a Run's spec is immutable).
	CreateOnly bool
	// CancelOnDelete cancels an unfinished create when the resource is deleted.
	CancelOnDelete bool
}

// Backoff spaces retries of a failed operation: Base, doubled per failure,
// at most Max.
type Backoff struct{ Base, Max time.Duration }

func (b Backoff) after(failures int) time.Duration {
	d := b.Base
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Reconciler reconciles one kind.
type Reconciler[T Subject] struct {
	Kind      Kind[T]
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	// WorkflowNamespace, when set, overrides the provider's namespace.
	WorkflowNamespace string
	// HelperImage holds /kfp-task for the shared Tasks.
	HelperImage string
	Backoff     Backoff
	// OperationTimeout bounds each operation's PipelineRun (Tekton fails it
	// then, and the operation is retried as a failed attempt); Tekton's
	// default (one hour) when zero.
	OperationTimeout time.Duration
	// RetryAfter is how soon a resource blocked on something outside the
	// operator (a missing provider) is looked at again.
	RetryAfter time.Duration
	// ConfigMapTTL bounds how stale an artifact repository ConfigMap may be
	// (default 10 s): edits reach new operations within it.
	ConfigMapTTL time.Duration
	Now          func() time.Time

	configMapsOnce sync.Once
	configMapCache *configMapReader

	// expected holds, per resource UID, the run this controller created and
	// the cache has not shown yet: until it does, the resource waits rather
	// than acting on a view without it (which could start a second run or
	// release a resource whose create is under way).
	expected sync.Map

	// failures remembers why each failed run failed, by run UID.
	failures     sync.Map
	failureCount atomic.Int64
}

// expectation is a run this controller created, not yet seen in the cache.
type expectation struct {
	name    string
	expires time.Time
}

// expectationTimeout bounds the wait for the cache: a run deleted before
// the cache ever showed it must not hold its resource forever.
const expectationTimeout = 5 * time.Second

// awaitingCache says whether a run this controller created for obj is not
// yet in runs; it forgets the expectation once it is, or once it expires.
func (r *Reconciler[T]) awaitingCache(obj Subject, runs runSet) bool {
	v, ok := r.expected.Load(obj.GetUID())
	if !ok {
		return false
	}
	e := v.(expectation)
	if runs.contains(e.name) || r.now().After(e.expires) {
		r.expected.Delete(obj.GetUID())
		return false
	}
	return true
}

// configMaps reads artifact repository ConfigMaps through a short-lived
// cache: a burst of resources in one namespace costs one request, without
// watching every ConfigMap in the cluster.
func (r *Reconciler[T]) configMaps() client.Reader {
	r.configMapsOnce.Do(func() { r.configMapCache = newConfigMapReader(r.APIReader, r.configMapTTL(), r.now) })
	return r.configMapCache
}

// Reconcile synchronises one resource with its backend.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Kind.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	if err != nil {
		return ctrl.Result{}, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	before := obj.CommonStatus().DeepCopy()

	var result ctrl.Result
	if obj.GetDeletionTimestamp().IsZero() {
		if !controllerutil.ContainsFinalizer(obj, Finalizer) {
			patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
			controllerutil.AddFinalizer(obj, Finalizer)
			if err := r.Client.Patch(ctx, obj, patch); err != nil {
				return ctrl.Result{}, err
			}
		}
		result, err = r.synchronize(ctx, obj)
	} else {
		var done bool
		result, done, err = r.finalize(ctx, obj)
		if done || err != nil {
			return result, err
		}
	}
	if werr := r.writeStatus(ctx, obj, before); werr != nil {
		return ctrl.Result{}, errors.Join(err, werr)
	}
	return result, err
}

// synchronize brings the backend to the resource's current spec.
func (r *Reconciler[T]) synchronize(ctx context.Context, obj T) (ctrl.Result, error) {
	status := obj.CommonStatus()
	status.ObservedGeneration = obj.GetGeneration()
	provider, err := loadProvider(ctx, r.Client, obj)
	if err != nil {
		return r.blocked(obj, err)
	}
	version, err := r.Kind.Version(obj, provider)
	if err != nil {
		return r.blocked(obj, &problem{pipelinesv1beta1.ReasonInvalidSpec, err.Error()})
	}
	runs, err := r.runsOf(ctx, obj, provider)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.awaitingCache(obj, runs) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	latest := runs.latest(OpCreate, OpUpdate)
	if latest != nil && !latest.IsDone() {
		r.running(ctx, obj, runs, latest)
		return ctrl.Result{}, nil
	}
	if latest != nil {
		if id, ok := succeeded(latest); ok {
			status.Provider = pipelinesv1beta1.ProviderAndID{Name: runProvider(latest), ID: id}
			status.Version = latest.Labels[LabelVersion]
		}
	}
	if status.Provider.ID != "" && status.Version == labelVersion(version) {
		r.synced(obj, fmt.Sprintf("version %s synchronised with provider %s (id %s)", version, providerName(provider), status.Provider.ID))
		return ctrl.Result{}, nil
	}
	if status.Provider.ID != "" && r.Kind.CreateOnly {
		r.synced(obj, fmt.Sprintf("created in provider %s (id %s)", providerName(provider), status.Provider.ID))
		return ctrl.Result{}, nil
	}
	op := OpCreate
	if status.Provider.ID != "" {
		op = OpUpdate
	}
	return r.runOperation(ctx, obj, provider, runs, op, version)
}

// runOperation starts (or waits to retry) op at version.
func (r *Reconciler[T]) runOperation(ctx context.Context, obj T, provider *pipelinesv1beta1.Provider, runs runSet,
	op, version string) (ctrl.Result, error) {
	failures := runs.failed(op, labelVersion(version))
	previous := ""
	if n := len(failures); n > 0 {
		last := failures[n-1]
		previous = r.failureMessage(ctx, last)
		wait := r.Backoff.after(n) - r.now().Sub(finishedAt(last))
		if wait > 0 {
			r.failed(obj, pipelinesv1beta1.ReasonPipelineRunFailed, fmt.Sprintf("%s (attempt %d; retrying in %s)", previous, n, wait.Round(100*time.Millisecond)))
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	if r.HelperImage == "" {
		return r.blocked(obj, &problem{pipelinesv1beta1.ReasonOperatorMisconfigured, "the operator has no helperImage configured"})
	}
	var artifacts *ArtifactLocation
	if r.Kind.ArtifactRef != nil && op != OpDelete { // deleting needs no artifacts, and must not wait on them
		var err error
		if artifacts, err = resolveArtifacts(ctx, r.configMaps(), obj.GetNamespace(), r.Kind.ArtifactRef(obj), provider); err != nil {
			return r.blocked(obj, err)
		}
	}
	var extra tektonv1.Params
	if r.Kind.Params != nil {
		var err error
		if extra, err = r.Kind.Params(obj, provider, op, artifacts); err != nil {
			return r.blocked(obj, &problem{pipelinesv1beta1.ReasonInvalidSpec, err.Error()})
		}
	}
	pr, err := buildRun(ctx, runRequest{obj: obj, kind: r.Kind.Name, provider: provider, op: op, version: version,
		attempt: len(failures), sequence: runs.count(op), namespace: r.workflowNamespace(provider), helper: r.HelperImage,
		artifacts: artifacts, extra: extra, now: r.now(), timeout: r.OperationTimeout})
	if err != nil {
		return r.blocked(obj, &problem{pipelinesv1beta1.ReasonInvalidSpec, err.Error()})
	}
	if err := r.Client.Create(ctx, pr); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating PipelineRun %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	r.expected.Store(obj.GetUID(), expectation{name: pr.Name, expires: r.now().Add(expectationTimeout)})
	r.progressing(obj, operationState(op), runningMessage(pr, len(failures), previous))
	return ctrl.Result{}, nil
}

// running reports pr, one of runs, in progress, with why the attempt before
// it failed, if one did.
func (r *Reconciler[T]) running(ctx context.Context, obj T, runs runSet, pr *tektonv1.PipelineRun) {
	op := pr.Labels[LabelOperation]
	failures := runs.failed(op, pr.Labels[LabelVersion])
	previous := ""
	if len(failures) > 0 {
		previous = r.failureMessage(ctx, failures[len(failures)-1])
	}
	r.progressing(obj, operationState(op), runningMessage(pr, len(failures), previous))
}

// runningMessage is the same whether the run was just created or is seen
// running later, so the reconcile its creation triggers writes nothing.
func runningMessage(pr *tektonv1.PipelineRun, failures int, previous string) string {
	msg := fmt.Sprintf("PipelineRun %s/%s is running (version %s)", pr.Namespace, pr.Name, pr.Labels[LabelVersion])
	if failures > 0 {
		msg += fmt.Sprintf(" (attempt %d; the previous one: %s)", failures+1, previous)
	}
	return msg
}

// finalize deletes the resource from the backend, then releases it. done
// means the finalizer is gone and the object must not be written again.
// cancel asks Tekton to stop a running PipelineRun (once; gone is fine).
func (r *Reconciler[T]) cancel(ctx context.Context, pr *tektonv1.PipelineRun) error {
	if pr.Spec.Status == tektonv1.PipelineRunSpecStatusCancelled {
		return nil
	}
	patch := client.MergeFrom(pr.DeepCopy())
	pr.Spec.Status = tektonv1.PipelineRunSpecStatusCancelled
	if err := r.Client.Patch(ctx, pr, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cancelling PipelineRun %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	return nil
}

func (r *Reconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, bool, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, true, nil
	}
	status := obj.CommonStatus()
	key := ProviderKey(obj.ProviderReference(), obj.GetNamespace())
	if status.Provider.Name != "" {
		key = ProviderKey(pipelinesv1beta1.ProviderReference(status.Provider.Name), obj.GetNamespace())
	}
	provider := &pipelinesv1beta1.Provider{}
	providerErr := r.Client.Get(ctx, key, provider)
	if providerErr != nil && !apierrors.IsNotFound(providerErr) {
		return ctrl.Result{}, false, providerErr
	}

	if providerErr == nil {
		runs, err := r.runsOf(ctx, obj, provider)
		if err != nil {
			return ctrl.Result{}, false, err
		}
		if r.awaitingCache(obj, runs) {
			return ctrl.Result{RequeueAfter: time.Second}, false, nil
		}
		skip := obj.GetAnnotations()[AnnotationSkipBackendDeletion] == "true"
		if latest := runs.latest(OpCreate, OpUpdate); latest != nil && !latest.IsDone() && skip {
			// Let it go now, as the annotation asks: stop the pending run
			// rather than wait for it (it may never end).
			if err := r.cancel(ctx, latest); err != nil {
				return ctrl.Result{}, false, err
			}
		} else if latest != nil && !latest.IsDone() {
			if r.Kind.CancelOnDelete {
				if err := r.cancel(ctx, latest); err != nil {
					return ctrl.Result{}, false, err
				}
			}
			// Wait for it: its result may be an id the backend now holds.
			r.progressing(obj, pipelinesv1beta1.StateDeleting, fmt.Sprintf("waiting for PipelineRun %s/%s to end before deleting", latest.Namespace, latest.Name))
			return ctrl.Result{}, false, nil
		} else if latest != nil {
			if id, ok := succeeded(latest); ok && status.Provider.ID == "" {
				status.Provider = pipelinesv1beta1.ProviderAndID{Name: runProvider(latest), ID: id}
			}
		}
		if status.Provider.ID != "" && obj.GetAnnotations()[AnnotationSkipBackendDeletion] != "true" {
			if deleted := runs.latest(OpDelete); deleted == nil || !deleted.IsDone() || !isSuccess(deleted) {
				if deleted != nil && !deleted.IsDone() {
					r.running(ctx, obj, runs, deleted)
					return ctrl.Result{}, false, nil
				}
				result, err := r.runOperation(ctx, obj, provider, runs, OpDelete, status.Version)
				if c := meta.FindStatusCondition(status.Conditions, pipelinesv1beta1.ConditionReady); c == nil || c.Status != "False" {
					setSynchronized(obj, pipelinesv1beta1.StateDeleting)
				}
				return result, false, err
			}
		}
	} else if status.Provider.ID != "" && obj.GetAnnotations()[AnnotationSkipBackendDeletion] != "true" {
		r.failed(obj, pipelinesv1beta1.ReasonProviderNotFound, fmt.Sprintf(
			"cannot delete from the backend: provider %s does not exist. Restore it, or annotate the resource with %s=true to let it go without deleting it from the backend",
			key, AnnotationSkipBackendDeletion))
		setSynchronized(obj, pipelinesv1beta1.StateFailed)
		return ctrl.Result{RequeueAfter: r.RetryAfter}, false, nil
	}

	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return ctrl.Result{}, false, client.IgnoreNotFound(err)
	}
	r.expected.Delete(obj.GetUID())
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(pipelinesv1beta1.StateDeleted), "Delete", "deleted from the backend")
	return ctrl.Result{}, true, nil
}

func (r *Reconciler[T]) configMapTTL() time.Duration {
	if r.ConfigMapTTL > 0 {
		return r.ConfigMapTTL
	}
	return defaultConfigMapTTL
}

func (r *Reconciler[T]) workflowNamespace(p *pipelinesv1beta1.Provider) string {
	if r.WorkflowNamespace != "" {
		return r.WorkflowNamespace
	}
	return p.Namespace
}

func (r *Reconciler[T]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// writeStatus patches the status when it changed and records an Event when
// the Synchronized state changed.
func (r *Reconciler[T]) writeStatus(ctx context.Context, obj T, before *pipelinesv1beta1.Status) error {
	after := obj.CommonStatus()
	if equality.Semantic.DeepEqual(before, after) {
		return nil
	}
	desired := after.DeepCopy()
	base := obj.DeepCopyObject().(T)
	*base.CommonStatus() = *before
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(err)
	}
	*obj.CommonStatus() = *desired
	was := meta.FindStatusCondition(before.Conditions, pipelinesv1beta1.ConditionSynchronized)
	now := meta.FindStatusCondition(desired.Conditions, pipelinesv1beta1.ConditionSynchronized)
	if now != nil && (was == nil || was.Reason != now.Reason) {
		eventType := corev1.EventTypeNormal
		if now.Reason == string(pipelinesv1beta1.StateFailed) {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(obj, nil, eventType, now.Reason, "Synchronize", "%s", now.Message)
	}
	return nil
}

func providerName(p *pipelinesv1beta1.Provider) string { return p.Namespace + "/" + p.Name }

// labelVersion is a version as the version label holds it.
func labelVersion(v string) string { return naming.LabelValue(v) }
