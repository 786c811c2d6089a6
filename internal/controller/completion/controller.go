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
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
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
	// Completions writes what a finished run means into status.
	Completions *Recorder
}

// Reconcile records what the finished PipelineRun req names means for its
// Run or RunConfiguration.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pr tektonv1.PipelineRun
	if err := r.Client.Get(ctx, req.NamespacedName, &pr); err != nil {
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	if !pr.IsDone() {
		// Its end is a change of it: the watch brings it back.
		return outcome.DoneOutcome().Result()
	}
	// Decided once, and only when a path trusts the run: a failed run's
	// TaskRuns are read from the API server.
	var decided *Verdict
	verdict := func() (Verdict, error) {
		if decided == nil {
			var failed []FailedTask
			if c := pr.Status.GetCondition(apis.ConditionSucceeded); c != nil && c.Status == corev1.ConditionFalse {
				var err error
				if failed, err = r.failedTasks(ctx, &pr); err != nil {
					return Verdict{}, err
				}
			}
			v, _ := Decide(&pr, failed) // done: IsDone
			decided = &v
		}
		return *decided, nil
	}
	run := outcome.DoneOutcome()
	var rcErr error
	if pr.Labels[contract.LabelRunUID] != "" {
		run = r.completeRun(ctx, &pr, verdict)
	}
	if pr.Labels[contract.LabelRunConfigurationUID] != "" {
		rcErr = r.recordForRunConfiguration(ctx, &pr, verdict)
	}
	return ended(run, rcErr).Result()
}

// ended is how a reconcile ends that completed the Run as run says and
// recorded for the RunConfiguration with rcErr: a failure of either is
// retried (both steps are idempotent), else the Run's outcome stands.
func ended(run outcome.Outcome, rcErr error) outcome.Outcome {
	var runErr error
	if run.Is(outcome.Transient) {
		runErr = run.Err
	}
	if err := errors.Join(runErr, rcErr); err != nil {
		return outcome.Retry(err)
	}
	return run
}

// completeRun sets the completion of the Run the PipelineRun was made for;
// it waits for the provider's id to reach the Run's status (not watched
// from here: the Run is not this controller's kind).
func (r *Reconciler) completeRun(ctx context.Context, pr *tektonv1.PipelineRun, verdict func() (Verdict, error)) outcome.Outcome {
	run, err := r.runOf(ctx, pr)
	if run == nil || err != nil || run.Status.CompletionState != "" {
		return outcome.DoneOr(err)
	}
	if run.Status.Provider.ID == "" {
		return outcome.WaitFor(waitForID)
	}
	ns, err := r.workflowNamespace(ctx, run)
	if err != nil {
		return outcome.Retry(err)
	}
	if !Trusted(pr, run, ns) {
		return outcome.DoneOutcome()
	}
	v, err := verdict()
	if err != nil {
		return outcome.Retry(err)
	}
	c, _ := r.completion(pr, v, run.Status.Provider.Name, run.Spec.Pipeline, run.Namespace)
	c.Event.RunName = &runcompletion.NamespacedName{Namespace: run.Namespace, Name: run.Name}
	c.Event.RunConfigurationName = runConfigurationOf(run)
	return outcome.DoneOr(r.Completions.CompleteRun(ctx, run, c))
}

// recordForRunConfiguration records a run of a RunConfiguration's Run or
// RunSchedule: a succeeded one as its latest (unless a later one is), and
// a scheduled one's event in its outbox. The run is trusted only in the
// workflow namespace of the RunConfiguration's provider.
func (r *Reconciler) recordForRunConfiguration(ctx context.Context, pr *tektonv1.PipelineRun, verdict func() (Verdict, error)) error {
	if pr.Status.CompletionTime == nil {
		return nil
	}
	ns, name, ok := strings.Cut(pr.Annotations[contract.AnnotationRunConfiguration], "/")
	if !ok {
		return nil
	}
	var rc pipelinesv1beta1.RunConfiguration
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &rc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if string(rc.UID) != pr.Labels[contract.LabelRunConfigurationUID] {
		return nil
	}
	kind, err := r.reportedFor(ctx, pr, &rc)
	if err != nil || kind == "" {
		return err
	}
	provider := pipelinesv1beta1.ProviderKey(rc.Spec.Run.Provider, rc.Namespace)
	ns, err = r.workflowNamespaceOf(ctx, provider)
	if err != nil || ns == "" || pr.Namespace != ns {
		return err
	}
	if pr.Annotations[contract.AnnotationCompletionRecorded] == string(rc.UID) || AlreadyRecorded(&rc, pr.Name) {
		return nil
	}
	v, err := verdict()
	if err != nil {
		return err
	}
	c, unreadable := r.completion(pr, v, provider.String(), rc.Spec.Run.Pipeline, rc.Namespace)
	c.Event.RunConfigurationName = &runcompletion.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}
	if unreadable != nil {
		r.Recorder.Eventf(&rc, pr, corev1.EventTypeWarning, "ArtifactsUnreadable", "Record", "PipelineRun %s: %v", pr.Name, unreadable)
	}
	if err := r.Completions.RecordForRunConfiguration(ctx, &rc, c, kind == "RunSchedule"); err != nil || kind != "RunSchedule" {
		return err
	}
	// Marked, so a restart or resync never queues its event again once it
	// has left the outbox's memory of published ids (a RunConfiguration
	// with many schedules keeps more finished runs than that).
	patch := client.MergeFrom(pr.DeepCopy())
	metav1.SetMetaDataAnnotation(&pr.ObjectMeta, contract.AnnotationCompletionRecorded, string(rc.UID))
	return client.IgnoreNotFound(r.Client.Patch(ctx, pr, patch))
}

// completion is what the ended PipelineRun pr reports, for a resource of
// namespace ns synchronised with provider ("namespace/name"); unreadable
// says why its outputs annotation could not be read (it then has none).
func (r *Reconciler) completion(pr *tektonv1.PipelineRun, verdict Verdict, provider string,
	pipeline pipelinesv1beta1.PipelineReference, ns string) (c Completion, unreadable error) {
	components, unreadable := Components(pr.Annotations[contract.AnnotationOutputs], pr.Name)
	pns, pname, _ := strings.Cut(provider, "/")
	data := runcompletion.EventData{
		Status:                runcompletion.Failed,
		PipelineName:          runcompletion.NamespacedName{Namespace: ns, Name: pipeline.Name()},
		RunID:                 pr.Name,
		ServingModelArtifacts: []runcompletion.Artifact{},
		PipelineComponents:    runcompletion.FromComponents(components),
		Provider:              runcompletion.NamespacedName{Namespace: pns, Name: pname},
	}
	if verdict.State == pipelinesv1beta1.CompletionStateSucceeded {
		data.Status = runcompletion.Succeeded
	}
	if t := pr.Status.StartTime; t != nil {
		data.RunStartTime = &t.Time
	}
	var ended metav1.Time
	if t := pr.Status.CompletionTime; t != nil {
		data.RunEndTime, ended = &t.Time, *t
	}
	return Completion{State: verdict.State, Message: verdict.Message, EndedAt: ended, Event: data, Related: pr,
		From: "PipelineRun " + pr.Namespace + "/" + pr.Name}, unreadable
}

// runConfigurationOf names the RunConfiguration that owns run, if any.
func runConfigurationOf(run *pipelinesv1beta1.Run) *runcompletion.NamespacedName {
	if o := metav1.GetControllerOf(run); o != nil && o.Kind == "RunConfiguration" {
		return &runcompletion.NamespacedName{Namespace: run.Namespace, Name: o.Name}
	}
	return nil
}

// reportedFor names the kind ("Run" or "RunSchedule") of the resource rc
// owns that pr was reported for: the Run's status.provider.id, or a run
// the RunSchedule's CronJob (its status.provider.id) named after a
// scheduled minute; empty when none. Labels alone could be written by
// anyone who can create PipelineRuns in the namespace.
func (r *Reconciler) reportedFor(ctx context.Context, pr *tektonv1.PipelineRun, rc *pipelinesv1beta1.RunConfiguration) (string, error) {
	kind, ref, _ := strings.Cut(pr.Annotations[contract.AnnotationResource], " ")
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns != rc.Namespace {
		return "", nil
	}
	var obj interface {
		client.Object
		CommonStatus() *pipelinesv1beta1.Status
	}
	var uidLabel string
	switch kind {
	case "Run":
		obj, uidLabel = &pipelinesv1beta1.Run{}, contract.LabelRunUID
	case "RunSchedule":
		obj, uidLabel = &pipelinesv1beta1.RunSchedule{}, contract.LabelRunScheduleUID
	default:
		return "", nil
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	owner := metav1.GetControllerOf(obj)
	if string(obj.GetUID()) != pr.Labels[uidLabel] || owner == nil || owner.UID != rc.UID {
		return "", nil
	}
	id := obj.CommonStatus().Provider.ID
	if kind == "Run" {
		if id != "" && id == pr.Name {
			return kind, nil
		}
		return "", nil
	}
	if _, err := meta.ScheduledTime(pr.Name); err == nil && id != "" && strings.HasPrefix(pr.Name, id+"-") {
		return kind, nil
	}
	return "", nil
}

// runOf finds the Run a PipelineRun was made for, by the annotation the
// provider wrote and the UID label; nil when there is none (any more).
func (r *Reconciler) runOf(ctx context.Context, pr *tektonv1.PipelineRun) (*pipelinesv1beta1.Run, error) {
	ref, ok := strings.CutPrefix(pr.Annotations[contract.AnnotationResource], "Run ")
	ns, name, found := strings.Cut(ref, "/")
	if !ok || !found {
		return nil, nil
	}
	var run pipelinesv1beta1.Run
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &run); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if string(run.UID) != pr.Labels[contract.LabelRunUID] {
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
	return r.workflowNamespaceOf(ctx, pipelinesv1beta1.ProviderKey(pipelinesv1beta1.ProviderReference(run.Status.Provider.Name), run.Namespace))
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
		return o.GetLabels()[contract.LabelManagedBy] == contract.ManagedByTektonProvider
	})
	return ctrl.NewControllerManagedBy(mgr).Named("completion").
		For(&tektonv1.PipelineRun{}, builder.WithPredicates(ours)).
		WithOptions(opts).
		Complete(r)
}
