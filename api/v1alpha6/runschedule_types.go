package v1alpha6

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RunScheduleSpec is a run spec fired on a schedule by the backend.
type RunScheduleSpec struct {
	RunSpec `json:",inline"`

	// Schedule on which runs start.
	// +optional
	Schedule Schedule `json:"schedule,omitempty"`
}

// RunSchedule is a recurring run in the provider's backend (kfp-operator
// v1alpha6).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mlrs,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule.cronExpression`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RunSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RunScheduleSpec `json:"spec,omitempty"`
	// +optional
	Status Status `json:"status,omitempty"`
}

// RunScheduleList is a list of RunSchedules.
//
// +kubebuilder:object:root=true
type RunScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RunSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RunSchedule{}, &RunScheduleList{})
}
