package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RunScheduleSpec is a RunSpec fired on a schedule by the backend.
type RunScheduleSpec struct {
	RunSpec `json:",inline"`

	// Schedule on which runs start.
	// +required
	Schedule Schedule `json:"schedule"`
}

// RunSchedule is a recurring run in the provider's backend. RunConfigurations
// own one per schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
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

	// +required
	Spec RunScheduleSpec `json:"spec"`
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
