package v1alpha6

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NamedValue is a name with a value (kfp-operator's apis.NamedValue). The
// value may also be written as a number, as kfp-operator's v0.6 Pipeline
// reference shows (`value: 100`); v1beta1 holds it as text.
type NamedValue struct {
	// Name of the value.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value: text, or a whole number.
	// +optional
	// (The rule: size() fails for a number and int() for text that is not
	// one, and CEL's || passes when either side holds; type() would cost
	// more than the API server allows for 100 items.)
	// +kubebuilder:validation:XValidation:rule="size(self) <= 32768 || self == int(self)",message="may be at most 32768 bytes"
	Value *intstr.IntOrString `json:"value,omitempty"`
}

// SynchronizationState is kfp-operator's status.synchronizationState; v1beta1
// keeps it as the reason of the Synchronized condition.
type SynchronizationState string

// ProviderAndID is the provider a resource was synchronised with, by name
// (v1beta1: namespace/name), and the backend's id for it.
type ProviderAndID struct {
	// Name of the provider.
	// +optional
	Name string `json:"name,omitempty"`

	// ID of the resource in the provider's backend.
	// +optional
	ID string `json:"id,omitempty"`
}

// Status is the status every kind shares.
type Status struct {
	// Provider the resource is synchronised with, and its backend id.
	// +optional
	Provider ProviderAndID `json:"provider,omitempty"`

	// SynchronizationState with the provider: the reason of the
	// Synchronized condition.
	// +optional
	SynchronizationState SynchronizationState `json:"synchronizationState,omitempty"`

	// Version of the spec last synchronised with the backend.
	// +optional
	Version string `json:"version,omitempty"`

	// ObservedGeneration is the metadata.generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready and Synchronized.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunSpec is what a Run or a RunConfiguration's runs execute.
type RunSpec struct {
	// Provider that executes the run, by name (v1beta1: name or namespace/name).
	// +optional
	// +kubebuilder:validation:MaxLength=317
	Provider string `json:"provider"`

	// Pipeline to run: NAME or NAME:VERSION.
	// +optional
	// +kubebuilder:validation:MaxLength=382
	Pipeline string `json:"pipeline,omitempty"`

	// ExperimentName groups runs in the backend.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ExperimentName string `json:"experimentName,omitempty"`

	// RuntimeParameters of the run (v1beta1: parameters).
	// +optional
	// +kubebuilder:validation:MaxItems=200
	RuntimeParameters []RuntimeParameter `json:"runtimeParameters,omitempty"`

	// Parameters is v1beta1's name of runtimeParameters, which
	// kfp-operator's v1alpha6 also admitted (a field it kept for its
	// conversion, and which its v0.6.0 dependency example uses); runs get
	// both lists' parameters.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	Parameters []RuntimeParameter `json:"parameters,omitempty"`

	// Artifacts the run exposes as outputs.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Artifacts []OutputArtifact `json:"artifacts,omitempty"`
}

// RuntimeParameter is one pipeline parameter, given directly or taken from
// another RunConfiguration's output artifact.
type RuntimeParameter struct {
	// Name of the parameter.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value of the parameter: text, or a whole number.
	// +optional
	// (The rule: size() fails for a number and int() for text that is not
	// one, and CEL's || passes when either side holds; type() would cost
	// more than the API server allows for 100 items.)
	// +kubebuilder:validation:XValidation:rule="size(self) <= 32768 || self == int(self)",message="may be at most 32768 bytes"
	Value *intstr.IntOrString `json:"value,omitempty"`

	// ValueFrom takes the value from elsewhere.
	// +optional
	ValueFrom *ValueFrom `json:"valueFrom,omitempty"`
}

// ValueFrom is the source of a parameter value.
type ValueFrom struct {
	// RunConfigurationRef names an output artifact of a RunConfiguration.
	// +required
	RunConfigurationRef RunConfigurationRef `json:"runConfigurationRef"`
}

// RunConfigurationRef names an output artifact of a RunConfiguration.
type RunConfigurationRef struct {
	// Name of the RunConfiguration.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// OutputArtifact is the name of one of its artifacts.
	// +required
	// +kubebuilder:validation:MaxLength=253
	OutputArtifact string `json:"outputArtifact"`
}

// OutputArtifact exposes a pipeline output as a named artifact.
type OutputArtifact struct {
	// Name of the artifact.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Path: COMPONENT:OUTPUT[:INDEX][[FILTER]]; INDEX defaults to 0.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`
}

// Schedule is a cron schedule with an optional active window.
type Schedule struct {
	// CronExpression with five or six fields.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	CronExpression string `json:"cronExpression,omitempty"`

	// StartTime before which the schedule does not fire.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime after which the schedule does not fire.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// Artifact is a named output of a run and where it is stored.
type Artifact struct {
	// Name of the artifact.
	Name string `json:"name"`
	// Location is the artifact's URI.
	Location string `json:"location"`
}

// RunReference is a run in the backend and the artifacts it produced.
type RunReference struct {
	// ProviderID is the run's id in the backend.
	// +optional
	ProviderID string `json:"providerId,omitempty"`

	// Artifacts selected by the run spec's artifacts.
	// +optional
	Artifacts []Artifact `json:"artifacts,omitempty"`
}

// Dependencies are upstream RunConfigurations' runs a run depends on.
type Dependencies struct {
	// RunConfigurations maps each RunConfiguration named by a valueFrom
	// parameter to its succeeded run that was used.
	// +optional
	RunConfigurations map[string]RunReference `json:"runConfigurations,omitempty"`
}
