package completion

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/artifactpath"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// Completion is a run's end as a backend reported it: the Tekton
// provider's PipelineRun, or a provider service's event.
type Completion struct {
	State   pipelinesv1beta1.CompletionState
	Message string
	EndedAt metav1.Time
	// Event is what is published about it; its RunID is the run's id in
	// the backend.
	Event runcompletion.EventData
	// Related is what reported it, for Events (may be nil).
	Related runtime.Object
	// From says where the report came from, for Events and logs.
	From string
}

// Components are the run's output artifacts.
func (c Completion) Components() []artifactpath.Component { return c.Event.Components() }

// Recorder writes completions into the status of Runs and RunConfigurations,
// each with its CloudEvent in the same write, so the event is queued if and
// only if the completion is recorded.
type Recorder struct {
	Client client.Client
	Events events.EventRecorder
	// Sinks are the names of the configured CloudEvent sinks; none, no
	// events are queued.
	Sinks []string
	// Seal authenticates the events queued and the latest runs recorded:
	// the statuses holding them are writable by tenants too.
	Seal *seal.Key
}

// CompleteRun sets run's completion once; a Run already completed is left
// as it is (reported twice, counted once).
func (r *Recorder) CompleteRun(ctx context.Context, run *pipelinesv1beta1.Run, c Completion) error {
	if run.Status.CompletionState != "" {
		return nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	now := metav1.Now()
	run.Status.CompletionState, run.Status.CompletionMessage, run.Status.MarkedCompletedAt = c.State, truncate(c.Message, maxMessage), &now
	dropped := r.enqueue(ctx, "Run", run, &run.Status.CompletionEvents, c, now)
	if err := r.Client.Status().Patch(ctx, run, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.warnDropped(run, dropped)
	eventType := corev1.EventTypeNormal
	if c.State == pipelinesv1beta1.CompletionStateFailed {
		eventType = corev1.EventTypeWarning
	}
	r.Events.Eventf(run, c.Related, eventType, "Run"+string(c.State), "Complete", "%s: %s", c.From, run.Status.CompletionMessage)
	return nil
}

// RecordForRunConfiguration makes a succeeded run the latest of rc unless a
// later one is recorded, and, for a scheduled run (which has no Run to
// carry it), queues its event in rc's outbox.
func (r *Recorder) RecordForRunConfiguration(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration, c Completion, scheduled bool) error {
	// Optimistic lock: of two runs ending together, the later must win.
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := false
	var missing []string
	if c.State == pipelinesv1beta1.CompletionStateSucceeded {
		var next *pipelinesv1beta1.RunReference
		// A latest run the operator did not record counts as none.
		next, missing = LatestSucceeded(r.Seal.Latest(rc), c.Event.RunID, c.EndedAt, c.Components(), rc.Spec.Run.Artifacts)
		if next != nil {
			r.Seal.SealLatest(rc, next)
			rc.Status.LatestRuns.Succeeded, changed = next, true
		}
	}
	var dropped *pipelinesv1beta1.PendingCompletionEvent
	if scheduled {
		n := len(rc.Status.CompletionEvents.Pending)
		dropped = r.enqueue(ctx, "RunConfiguration", rc, &rc.Status.CompletionEvents, c, metav1.Now())
		changed = changed || dropped != nil || len(rc.Status.CompletionEvents.Pending) != n
	}
	if !changed {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, rc, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.warnDropped(rc, dropped)
	if len(missing) > 0 {
		r.Events.Eventf(rc, c.Related, corev1.EventTypeWarning, "ArtifactsNotFound", "Record",
			"run %s succeeded without the artifacts %s that spec.run.artifacts names", c.Event.RunID, strings.Join(missing, ", "))
	}
	return nil
}

// enqueue adds c's event to box for every sink; it returns the event
// dropped to make room, if any. An event too large for a status is not
// queued (an Event says so): the completion itself must still be recorded.
func (r *Recorder) enqueue(ctx context.Context, kind string, obj client.Object, box *pipelinesv1beta1.CompletionEvents, c Completion, now metav1.Time) *pipelinesv1beta1.PendingCompletionEvent {
	if len(r.Sinks) == 0 {
		return nil
	}
	ev, err := runcompletion.Pending(c.Event, now, r.Sinks)
	if err != nil {
		r.Events.Eventf(obj, c.Related, corev1.EventTypeWarning, "CompletionEventNotQueued", "Publish", "run %s: %v", c.Event.RunID, err)
		return nil
	}
	r.Seal.SealEvent(kind, obj, &ev)
	_, dropped := runcompletion.Enqueue(box, ev)
	return dropped
}

func (r *Recorder) warnDropped(obj runtime.Object, dropped *pipelinesv1beta1.PendingCompletionEvent) {
	if dropped == nil {
		return
	}
	droppedEvents.Inc()
	r.Events.Eventf(obj, nil, corev1.EventTypeWarning, "CompletionEventDropped", "Publish",
		"%s", fmt.Sprintf("the completion event of run %s was dropped undelivered (sinks %s): more than %d were waiting",
			dropped.ID, strings.Join(dropped.Sinks, ", "), pipelinesv1beta1.MaxPendingCompletionEvents))
}
