// Package status holds the chores every controller shares: its Ready and
// Synchronized conditions from one Report, status writes, finalizers and
// the Events that mark transitions. The engine, the Provider controller and
// the RunConfiguration controller all use it, so each chore is written once.
package status

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Report is a resource's readiness in one value. Both conditions are derived
// from it, so they never disagree and no call order matters.
type Report struct {
	// Ready is the Ready condition's status.
	Ready metav1.ConditionStatus
	// Reason is the Ready condition's reason.
	Reason string
	// State is the Synchronized condition's reason.
	State   pipelinesv1beta1.SynchronizationState
	Message string
}

// Synced reports that the newest spec is in effect.
func Synced(message string) Report {
	return Report{Ready: metav1.ConditionTrue, Reason: pipelinesv1beta1.ReasonSynchronized, State: pipelinesv1beta1.StateSucceeded, Message: message}
}

// Progressing reports that work toward state is under way.
func Progressing(state pipelinesv1beta1.SynchronizationState, message string) Report {
	return Report{Ready: metav1.ConditionUnknown, Reason: pipelinesv1beta1.ReasonProgressing, State: state, Message: message}
}

// Blocked reports waiting, for reason, on something outside the resource that is
// expected to come right (Ready stays Unknown).
func Blocked(reason string, state pipelinesv1beta1.SynchronizationState, message string) Report {
	return Report{Ready: metav1.ConditionUnknown, Reason: reason, State: state, Message: message}
}

// Failed reports that the resource cannot be brought to its spec, for reason.
func Failed(reason, message string) Report {
	return Report{Ready: metav1.ConditionFalse, Reason: reason, State: pipelinesv1beta1.StateFailed, Message: message}
}

// synchronizedStatus is the Synchronized condition's status for a state.
func synchronizedStatus(state pipelinesv1beta1.SynchronizationState) metav1.ConditionStatus {
	switch state {
	case pipelinesv1beta1.StateSucceeded, pipelinesv1beta1.StateDeleted:
		return metav1.ConditionTrue
	case pipelinesv1beta1.StateFailed:
		return metav1.ConditionFalse
	}
	return metav1.ConditionUnknown
}

// Set writes the Ready and Synchronized conditions of r for generation.
func Set(conditions *[]metav1.Condition, generation int64, r Report) {
	meta.SetStatusCondition(conditions, metav1.Condition{Type: pipelinesv1beta1.ConditionReady,
		Status: r.Ready, Reason: r.Reason, Message: r.Message, ObservedGeneration: generation})
	meta.SetStatusCondition(conditions, metav1.Condition{Type: pipelinesv1beta1.ConditionSynchronized,
		Status: synchronizedStatus(r.State), Reason: string(r.State), Message: r.Message, ObservedGeneration: generation})
}

// Of is the Report the conditions hold (zero when there are none).
func Of(conditions []metav1.Condition) Report {
	var r Report
	if c := meta.FindStatusCondition(conditions, pipelinesv1beta1.ConditionReady); c != nil {
		r.Ready, r.Reason, r.Message = c.Status, c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(conditions, pipelinesv1beta1.ConditionSynchronized); c != nil {
		r.State = pipelinesv1beta1.SynchronizationState(c.Reason)
	}
	return r
}

// Writer writes statuses and records Events for one controller.
type Writer struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Conditions returns an object's conditions, to tell transitions.
	Conditions func(client.Object) []metav1.Condition
	// Quiet, when set, says which transitions record no Event (those into
	// a report it returns true for).
	Quiet func(Report) bool
}

// Patch writes obj's status when it differs from base's (obj as read), and
// records an Event when its readiness changed (unless Quiet). A resource deleted meanwhile
// is not an error: there is nothing left to report on.
func (w Writer) Patch(ctx context.Context, base, obj client.Object) error {
	if equality.Semantic.DeepEqual(base, obj) {
		return nil
	}
	was, now := Of(w.Conditions(base)), Of(w.Conditions(obj))
	if err := w.Client.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(err)
	}
	if now.Reason != "" && (was.Ready != now.Ready || was.Reason != now.Reason || was.State != now.State) &&
		(w.Quiet == nil || !w.Quiet(now)) {
		eventType := corev1.EventTypeNormal
		if now.Ready == metav1.ConditionFalse {
			eventType = corev1.EventTypeWarning
		}
		w.Recorder.Eventf(obj, nil, eventType, now.Reason, "Synchronize", "%s", now.Message)
	}
	return nil
}

// AddFinalizer adds finalizer to obj, patching it with optimistic locking,
// when obj lacks it.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, finalizer)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("adding finalizer %s: %w", finalizer, err)
	}
	return nil
}

// RemoveFinalizer removes finalizer from obj, patching it with optimistic
// locking; gone is fine.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, finalizer)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}
