package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OnChangeTrigger names a change that starts a new Run.
// +kubebuilder:validation:Enum=pipeline;runSpec
type OnChangeTrigger string

// OnChange triggers.
const (
	// OnChangePipeline starts a run when the referenced Pipeline's version changes.
	OnChangePipeline OnChangeTrigger = "pipeline"
	// OnChangeRunSpec starts a run when the RunConfiguration's run spec changes.
	OnChangeRunSpec OnChangeTrigger = "runSpec"
)

// Triggers say when a RunConfiguration starts runs.
type Triggers struct {
	// Schedules each become one owned RunSchedule; no two may be equal.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, a == b))",message="schedules must not contain duplicates"
	Schedules []Schedule `json:"schedules,omitempty"`

	// OnChange starts a Run when any of these change.
	// +optional
	// +listType=set
	OnChange []OnChangeTrigger `json:"onChange,omitempty"`

	// RunConfigurations in the same namespace whose successful runs start a run of this one.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=253
	RunConfigurations []string `json:"runConfigurations,omitempty"`
}

// RunConfigurationSpec is a run spec and the triggers that start it.
type RunConfigurationSpec struct {
	// Run is what each triggered run executes.
	// +required
	Run RunSpec `json:"run"`

	// Triggers start runs.
	// +optional
	Triggers Triggers `json:"triggers,omitempty"`
}

// RunConfigurationStatus is the status of a RunConfiguration.
type RunConfigurationStatus struct {
	Status `json:",inline"`

	// TriggeredPipelineVersion is the pipeline version the latest run was started for.
	// +optional
	TriggeredPipelineVersion string `json:"triggeredPipelineVersion,omitempty"`

	// TriggeredRunSpecVersion is the run spec version the latest run was started for.
	// +optional
	TriggeredRunSpecVersion string `json:"triggeredRunSpecVersion,omitempty"`

	// LatestRuns are this RunConfiguration's most recent runs by outcome.
	// +optional
	LatestRuns LatestRuns `json:"latestRuns,omitempty"`

	// Triggers records what the triggers have already fired for.
	// +optional
	Triggers TriggersStatus `json:"triggers,omitempty"`

	// Dependencies are the upstream runs whose artifacts the run spec's
	// valueFrom parameters resolve to.
	// +optional
	Dependencies Dependencies `json:"dependencies,omitempty"`

	// CompletionEvents holds the completion CloudEvents of the scheduled runs
	// (those of its RunSchedules, which have no Run) until every configured
	// sink has taken them.
	// +optional
	CompletionEvents CompletionEvents `json:"completionEvents,omitempty"`
}

// LatestRuns are a RunConfiguration's most recent runs by outcome.
type LatestRuns struct {
	// Succeeded is the latest run that succeeded.
	// +optional
	Succeeded *RunReference `json:"succeeded,omitempty"`
}

// RunReference is one run in the backend and the artifacts it produced
// that the run spec's artifacts[] name.
type RunReference struct {
	// ProviderID is the run's id in the backend.
	ProviderID string `json:"providerId"`

	// Artifacts selected by the run spec's artifacts[].path.
	// +optional
	// +listType=atomic
	Artifacts []Artifact `json:"artifacts,omitempty"`

	// CompletedAt is when the run ended in the backend.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Seal authenticates a RunConfiguration's latest succeeded run as
	// recorded by the operator from its backend: anyone who may write this
	// status could name another run, and a latest run whose seal does not
	// verify triggers and resolves nothing.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Seal string `json:"seal,omitempty"`
}

// Artifact is a named output of a run and where it is stored.
type Artifact struct {
	// Name is the run spec's artifacts[].name.
	Name string `json:"name"`
	// Location is the artifact's URI.
	Location string `json:"location"`
}

// TriggersStatus records what each trigger last fired for.
type TriggersStatus struct {
	// RunConfigurations maps each upstream RunConfiguration of
	// triggers.runConfigurations to the succeeded run that last started a
	// run of this one.
	// +optional
	RunConfigurations map[string]TriggeredBy `json:"runConfigurations,omitempty"`
}

// TriggeredBy is the upstream run a trigger fired for.
type TriggeredBy struct {
	// ProviderID is the upstream run's id in the backend.
	ProviderID string `json:"providerId"`
}

// Dependencies are upstream RunConfigurations' runs a run depends on.
type Dependencies struct {
	// RunConfigurations maps each RunConfiguration named by a valueFrom
	// parameter to its succeeded run that was used.
	// +optional
	RunConfigurations map[string]RunReference `json:"runConfigurations,omitempty"`
}

// RunConfiguration runs a pipeline on schedules and on changes.
//
// +kubebuilder:validation:XValidation:rule="!has(self.spec.triggers) || !has(self.spec.triggers.runConfigurations) || !self.spec.triggers.runConfigurations.exists(n, n == self.metadata.name)",message="spec.triggers.runConfigurations must not name the RunConfiguration itself: each of its runs would start another"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=mlrc,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.run.provider`
// +kubebuilder:printcolumn:name="Pipeline",type=string,JSONPath=`.spec.run.pipeline`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RunConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RunConfigurationSpec `json:"spec"`
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
