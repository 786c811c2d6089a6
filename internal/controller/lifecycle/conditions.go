package lifecycle

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func setCondition(obj Subject, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&obj.CommonStatus().Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: obj.GetGeneration(),
	})
}

// setSynchronized sets the Synchronized condition to state, keeping its message.
func setSynchronized(obj Subject, state pipelinesv1beta1.SynchronizationState) {
	msg := ""
	if c := meta.FindStatusCondition(obj.CommonStatus().Conditions, pipelinesv1beta1.ConditionReady); c != nil {
		msg = c.Message
	}
	status := metav1.ConditionUnknown
	switch state {
	case pipelinesv1beta1.StateSucceeded, pipelinesv1beta1.StateDeleted:
		status = metav1.ConditionTrue
	case pipelinesv1beta1.StateFailed:
		status = metav1.ConditionFalse
	}
	setCondition(obj, pipelinesv1beta1.ConditionSynchronized, status, string(state), msg)
}

func (r *Reconciler[T]) synced(obj Subject, message string) {
	setCondition(obj, pipelinesv1beta1.ConditionReady, metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized, message)
	setSynchronized(obj, pipelinesv1beta1.StateSucceeded)
}

func (r *Reconciler[T]) progressing(obj Subject, state pipelinesv1beta1.SynchronizationState, message string) {
	setCondition(obj, pipelinesv1beta1.ConditionReady, metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing, message)
	setSynchronized(obj, state)
}

func (r *Reconciler[T]) failed(obj Subject, reason, message string) {
	setCondition(obj, pipelinesv1beta1.ConditionReady, metav1.ConditionFalse, reason, message)
	setSynchronized(obj, pipelinesv1beta1.StateFailed)
}

// blocked reports a problem and looks again later; other errors are
// returned for the queue's backoff.
func (r *Reconciler[T]) blocked(obj Subject, err error) (ctrl.Result, error) {
	var p *problem
	if !errors.As(err, &p) {
		return ctrl.Result{}, err
	}
	if p.reason == pipelinesv1beta1.ReasonProviderNotReady {
		setCondition(obj, pipelinesv1beta1.ConditionReady, metav1.ConditionUnknown, p.reason, p.message)
	} else {
		r.failed(obj, p.reason, p.message)
	}
	return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
}

// operationState is the Synchronized state while op runs.
func operationState(op string) pipelinesv1beta1.SynchronizationState {
	switch op {
	case OpUpdate:
		return pipelinesv1beta1.StateUpdating
	case OpDelete:
		return pipelinesv1beta1.StateDeleting
	}
	return pipelinesv1beta1.StateCreating
}
