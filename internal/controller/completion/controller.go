package completion

import (
	"context"
	"errors"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"knative.dev/pkg/apis"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"
)

// waitForID is how long to look again when a run ended before the
// provider's answer (its id) reached the Run's status.
const waitForID = 5 * time.Second

// Reconciler completes Runs from their PipelineRuns.
type Reconciler struct {
	Client    client.Client // the manager's cached client
	APIReader client.Reader // TaskRuns are not cached
	Recorder  events.EventRecorder
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pr tektonv1.PipelineRun
	if err := r.Client.Get(ctx, req.NamespacedName, &pr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pr.IsDone() {
		return ctrl.Result{}, nil
	}
	var result ctrl.Result
	var runErr, rcErr error
	if pr.Labels[meta.LabelRunUID] != "" {
		result, runErr = r.completeRun(ctx, &pr)
	}
	if pr.Labels[meta.LabelRunConfigurationUID] != "" {
		rcErr = r.recordSucceeded(ctx, &pr)
	}
	return result, errors.Join(runErr, rcErr)
}

// completeRun sets the completion of the Run the PipelineRun was made for.
func (r *Reconciler) completeRun(ctx context.Context, pr *tektonv1.PipelineRun) (ctrl.Result, error) {
	run, err := r.runOf(ctx, pr)
	if run == nil || err != nil || run.Status.CompletionState != "" {
		return ctrl.Result{}, err
	}
	if run.Status.Provider.ID == "" {
		return ctrl.Result{RequeueAfter: waitForID}, nil
	}
	ns, err := r.workflowNamespace(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !Trusted(pr, run, ns) {
		return ctrl.Result{}, nil
	}
	failed, err := r.failedTasks(ctx, pr)
	if err != nil {
		return ctrl.Result{}, err
	}
	verdict, done := Decide(pr, failed)
	if !done {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(run.DeepCopy())
	now := metav1.Now()
	run.Status.CompletionState, run.Status.CompletionMessage, run.Status.MarkedCompletedAt = verdict.State, verdict.Message, &now
	if err := r.Client.Status().Patch(ctx, run, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	eventType := corev1.EventTypeNormal
	if verdict.State == pipelinesv1beta1.CompletionStateFailed {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(run, pr, eventType, "Run"+string(verdict.State), "Complete",
		"PipelineRun %s/%s: %s", pr.Namespace, pr.Name, verdict.Message)
	return ctrl.Result{}, nil
}

// recordSucceeded makes a succeeded run the latest of the RunConfiguration
// that owns its Run or RunSchedule, unless a later one is recorded. The
// run is trusted only in the workflow namespace of the RunConfiguration's
// provider.
func (r *Reconciler) recordSucceeded(ctx context.Context, pr *tektonv1.PipelineRun) error {
	c := pr.Status.GetCondition(apis.ConditionSucceeded)
	if c == nil || c.Status != corev1.ConditionTrue || pr.Status.CompletionTime == nil {
		return nil
	}
	ns, name, ok := strings.Cut(pr.Annotations[meta.AnnotationRunConfiguration], "/")
	if !ok {
		return nil
	}
	var rc pipelinesv1beta1.RunConfiguration
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &rc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if string(rc.UID) != pr.Labels[meta.LabelRunConfigurationUID] {
		return nil
	}
	if reported, err := r.reportedFor(ctx, pr, &rc); err != nil || !reported {
		return err
	}
	ns, err := r.workflowNamespaceOf(ctx, lifecycle.ProviderKey(rc.Spec.Run.Provider, rc.Namespace))
	if err != nil || ns == "" || pr.Namespace != ns {
		return err
	}
	components, unreadable := Components(pr.Annotations[meta.AnnotationOutputs], pr.Name)
	next, missing := LatestSucceeded(rc.Status.LatestRuns.Succeeded, pr.Name, *pr.Status.CompletionTime, components, rc.Spec.Run.Artifacts)
	if next == nil {
		return nil
	}
	if unreadable != nil {
		r.Recorder.Eventf(&rc, pr, corev1.EventTypeWarning, "ArtifactsUnreadable", "Record", "PipelineRun %s: %v", pr.Name, unreadable)
	}
	// Optimistic lock: of two runs ending together, the later must win.
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rc.Status.LatestRuns.Succeeded = next
	if err := r.Client.Status().Patch(ctx, &rc, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	if len(missing) > 0 {
		r.Recorder.Eventf(&rc, pr, corev1.EventTypeWarning, "ArtifactsNotFound", "Record",
			"run %s succeeded without the artifacts %s that spec.run.artifacts names", pr.Name, strings.Join(missing, ", "))
	}
	return nil
}

// reportedFor says whether pr is a run the provider reported for a Run or
// RunSchedule that rc owns: the Run's status.provider.id, or a run the
// RunSchedule's CronJob (its status.provider.id) named after a scheduled
// minute. Labels alone could be written by anyone who can create
// PipelineRuns in the namespace.
func (r *Reconciler) reportedFor(ctx context.Context, pr *tektonv1.PipelineRun, rc *pipelinesv1beta1.RunConfiguration) (bool, error) {
	kind, ref, _ := strings.Cut(pr.Annotations[meta.AnnotationResource], " ")
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns != rc.Namespace {
		return false, nil
	}
	var obj interface {
		client.Object
		CommonStatus() *pipelinesv1beta1.Status
	}
	var uidLabel string
	switch kind {
	case "Run":
		obj, uidLabel = &pipelinesv1beta1.Run{}, meta.LabelRunUID
	case "RunSchedule":
		obj, uidLabel = &pipelinesv1beta1.RunSchedule{}, meta.LabelRunScheduleUID
	default:
		return false, nil
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	owner := metav1.GetControllerOf(obj)
	if string(obj.GetUID()) != pr.Labels[uidLabel] || owner == nil || owner.UID != rc.UID {
		return false, nil
	}
	id := obj.CommonStatus().Provider.ID
	if kind == "Run" {
		return id != "" && id == pr.Name, nil
	}
	_, err := meta.ScheduledTime(pr.Name)
	return id != "" && strings.HasPrefix(pr.Name, id+"-") && err == nil, nil
}

// runOf finds the Run a PipelineRun was made for, by the annotation the
// provider wrote and the UID label; nil when there is none (any more).
func (r *Reconciler) runOf(ctx context.Context, pr *tektonv1.PipelineRun) (*pipelinesv1beta1.Run, error) {
	ref, ok := strings.CutPrefix(pr.Annotations[meta.AnnotationResource], "Run ")
	ns, name, found := strings.Cut(ref, "/")
	if !ok || !found {
		return nil, nil
	}
	var run pipelinesv1beta1.Run
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &run); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if string(run.UID) != pr.Labels[meta.LabelRunUID] {
		return nil, nil
	}
	return &run, nil
}

// workflowNamespace is where the Run's provider runs its workflows; empty
// when the provider is gone or not resolved yet.
func (r *Reconciler) workflowNamespace(ctx context.Context, run *pipelinesv1beta1.Run) (string, error) {
	if !strings.Contains(run.Status.Provider.Name, "/") {
		return "", nil
	}
	return r.workflowNamespaceOf(ctx, lifecycle.ProviderKey(pipelinesv1beta1.ProviderReference(run.Status.Provider.Name), run.Namespace))
}

// workflowNamespaceOf is where Provider key runs its workflows; empty when
// it is gone or not resolved yet.
func (r *Reconciler) workflowNamespaceOf(ctx context.Context, key types.NamespacedName) (string, error) {
	var p pipelinesv1beta1.Provider
	if err := r.Client.Get(ctx, key, &p); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return p.Status.WorkflowNamespace, nil
}

func (r *Reconciler) failedTasks(ctx context.Context, pr *tektonv1.PipelineRun) ([]FailedTask, error) {
	var failed []FailedTask
	for _, child := range pr.Status.ChildReferences {
		if child.Kind != "TaskRun" {
			continue
		}
		var tr tektonv1.TaskRun
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: pr.Namespace, Name: child.Name}, &tr)
		if err != nil {
			// Gone, or not readable here: the run's own message says enough.
			ctrl.LoggerFrom(ctx).Info("cannot read a failed run's TaskRun", "taskRun", child.Name, "error", err.Error())
			continue
		}
		if c := tr.Status.GetCondition(apis.ConditionSucceeded); c != nil && c.Status == corev1.ConditionFalse {
			failed = append(failed, FailedTask{Name: child.PipelineTaskName, Message: c.Message})
		}
	}
	return failed, nil
}

// SetupWithManager watches the Tekton provider's PipelineRuns.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[meta.LabelManagedBy] == meta.ManagedBy
	})
	return ctrl.NewControllerManagedBy(mgr).Named("completion").
		For(&tektonv1.PipelineRun{}, builder.WithPredicates(ours)).
		WithOptions(opts).
		Complete(r)
}
