package v1alpha6

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OnChangeType names a change that starts a new run.
// +kubebuilder:validation:Enum=pipeline;runSpec
type OnChangeType string

// Triggers say when a RunConfiguration starts runs.
type Triggers struct {
	// Schedules each become one owned RunSchedule.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Schedules []Schedule `json:"schedules,omitempty"`

	// OnChange starts a run when any of these change.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	OnChange []OnChangeType `json:"onChange,omitempty"`

	// RunConfigurations in the same namespace whose successful runs start a run of this one.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=253
	RunConfigurations []string `json:"runConfigurations,omitempty"`
}

// RunConfigurationSpec is a run spec and the triggers that start it.
type RunConfigurationSpec struct {
	// Run is what each triggered run executes.
	// +optional
	Run RunSpec `json:"run,omitempty"`

	// Triggers start runs.
	// +optional
	Triggers Triggers `json:"triggers,omitempty"`
}

// TriggeredRunReference is the upstream run a trigger fired for.
type TriggeredRunReference struct {
	// ProviderID is the upstream run's id in the backend.
	// +optional
	ProviderID string `json:"providerId,omitempty"`
}

// RunSpecTriggerStatus is the run spec version the latest run was started for.
type RunSpecTriggerStatus struct {
	// Version of the run spec (v1beta1: status.triggeredRunSpecVersion).
	// +optional
	Version string `json:"version,omitempty"`
}

// TriggersStatus records what the triggers last fired for.
type TriggersStatus struct {
	// RunConfigurations maps each upstream RunConfiguration to the
	// succeeded run that last started a run of this one.
	// +optional
	RunConfigurations map[string]TriggeredRunReference `json:"runConfigurations,omitempty"`

	// RunSpec is the run spec version the latest run was started for.
	// +optional
	RunSpec RunSpecTriggerStatus `json:"runSpec,omitempty"`
}

// LatestRuns are a RunConfiguration's most recent runs by outcome.
type LatestRuns struct {
	// Succeeded is the latest run that succeeded.
	// +optional
	Succeeded RunReference `json:"succeeded,omitempty"`
}

// RunConfigurationStatus is the status of a RunConfiguration.
type RunConfigurationStatus struct {
	// SynchronizationState: the reason of the Synchronized condition.
	// +optional
	SynchronizationState SynchronizationState `json:"synchronizationState,omitempty"`

	// Provider the runs are started with, by name (v1beta1:
	// status.provider.name, namespace/name).
	// +optional
	Provider string `json:"provider,omitempty"`

	// ObservedPipelineVersion is the pipeline version last observed.
	// +optional
	ObservedPipelineVersion string `json:"observedPipelineVersion,omitempty"`

	// TriggeredPipelineVersion is the pipeline version the latest run was started for.
	// +optional
	TriggeredPipelineVersion string `json:"triggeredPipelineVersion,omitempty"`

	// LatestRuns are the most recent runs by outcome.
	// +optional
	LatestRuns LatestRuns `json:"latestRuns,omitempty"`

	// Dependencies are the upstream runs whose artifacts the run spec's
	// valueFrom parameters resolve to.
	// +optional
	Dependencies Dependencies `json:"dependencies,omitempty"`

	// Triggers records what the triggers have already fired for.
	// +optional
	Triggers TriggersStatus `json:"triggers,omitempty"`

	// ObservedGeneration is the metadata.generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready and Synchronized.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunConfiguration runs a pipeline on schedules and on changes
// (kfp-operator v1alpha6).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mlrc,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.run.provider`
// +kubebuilder:printcolumn:name="Pipeline",type=string,JSONPath=`.spec.run.pipeline`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RunConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RunConfigurationSpec `json:"spec,omitempty"`
	// +optional
	Status RunConfigurationStatus `json:"status,omitempty"`
}

// RunConfigurationList is a list of RunConfigurations.
//
// +kubebuilder:object:root=true
type RunConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RunConfiguration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RunConfiguration{}, &RunConfigurationList{})
}
