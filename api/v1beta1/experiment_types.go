package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ExperimentSpec is an experiment in the provider's backend.
type ExperimentSpec struct {
	// Provider that hosts the experiment.
	// +required
	Provider ProviderReference `json:"provider"`

	// Description shown in the backend.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description string `json:"description,omitempty"`
}

// Experiment groups runs in the provider's backend.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=mlexp,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Experiment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ExperimentSpec `json:"spec"`
	// +optional
	Status Status `json:"status,omitempty"`
}

// ExperimentList is a list of Experiments.
//
// +kubebuilder:object:root=true
type ExperimentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Experiment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Experiment{}, &ExperimentList{})
}
