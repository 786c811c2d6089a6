package v1alpha6

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CompletionState is how a run ended: Succeeded or Failed.
type CompletionState string

// RunStatus is the status of a Run.
type RunStatus struct {
	Status `json:",inline"`

	// ObservedPipelineVersion is the pipeline version the run was started with.
	// +optional
	ObservedPipelineVersion string `json:"observedPipelineVersion,omitempty"`

	// Dependencies are the RunConfigurations' runs whose artifacts this
	// run's valueFrom parameters were resolved from.
	// +optional
	Dependencies Dependencies `json:"dependencies,omitempty"`

	// CompletionState is set once the run has finished in the backend.
	// +optional
	CompletionState CompletionState `json:"completionState,omitempty"`

	// MarkedCompletedAt is when the operator recorded the completion.
	// +optional
	MarkedCompletedAt *metav1.Time `json:"markedCompletedAt,omitempty"`
}

// Run is one execution of a pipeline (kfp-operator v1alpha6). Its spec
// cannot change after creation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mlr,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Pipeline",type=string,JSONPath=`.spec.pipeline`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Completion",type=string,JSONPath=`.status.completionState`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Run struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create a new Run instead"
	Spec RunSpec `json:"spec,omitempty"`
	// +optional
	Status RunStatus `json:"status,omitempty"`
}

// RunList is a list of Runs.
//
// +kubebuilder:object:root=true
type RunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Run `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Run{}, &RunList{})
}
