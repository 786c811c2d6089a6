package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Bounds of the completion-event outbox, so a status stays far below the
// API server's object size limit while sinks are down.
const (
	// MaxPendingCompletionEvents is how many undelivered events one resource
	// holds; a new one beyond it drops the oldest (with a Warning Event).
	MaxPendingCompletionEvents = 16
	// MaxPublishedCompletionEvents is how many delivered ids are remembered,
	// so a completion reported again is not published again.
	MaxPublishedCompletionEvents = 32
	// MaxCompletionEventData bounds one event's data (JSON bytes).
	MaxCompletionEventData = 32768
)

// ConditionCompletionEventsDelivered is False while a sink keeps refusing
// or failing to take this resource's run-completion events.
const ConditionCompletionEventsDelivered = "CompletionEventsDelivered"

// Reasons of the CompletionEventsDelivered condition.
const (
	ReasonEventsDelivered = "Delivered"
	ReasonSinkFailing     = "SinkFailing"
)

// CompletionEvents is the outbox of the run-completion CloudEvents this
// resource publishes: an event is written here together with the
// completion it reports, and leaves when every configured sink took it, so
// neither an operator restart nor a sink outage loses one.
type CompletionEvents struct {
	// Pending are the events some sink has not taken yet, oldest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Pending []PendingCompletionEvent `json:"pending,omitempty"`

	// Published are the ids of the newest events every sink took, newest
	// last.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	Published []string `json:"published,omitempty"`
}

// PendingCompletionEvent is one run-completion CloudEvent waiting for sinks.
type PendingCompletionEvent struct {
	// ID is the CloudEvent id: the run's id in the backend, the same on every
	// attempt so a sink can drop a repeat.
	// +kubebuilder:validation:MaxLength=512
	ID string `json:"id"`

	// Source is the CloudEvent source: the reporting Provider.
	// +kubebuilder:validation:MaxLength=512
	Source string `json:"source"`

	// Time is when the operator recorded the completion.
	Time metav1.Time `json:"time"`

	// Data is the event's data, kfp-operator's RunCompletionEventData JSON.
	// +kubebuilder:validation:MaxLength=32768
	Data string `json:"data"`

	// Sinks are the names of the configured sinks still to deliver to.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Sinks []string `json:"sinks"`

	// Seal authenticates the event as the operator's: anyone who may write
	// this status could add an event, and one whose seal does not verify is
	// dropped, never published.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Seal string `json:"seal,omitempty"`
}
