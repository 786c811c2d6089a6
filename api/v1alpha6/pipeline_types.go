package v1alpha6

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipelineSpec is a TFX pipeline packaged as an image (kfp-operator
// v1alpha6); v1beta1 holds tfxComponents and beamArgs as the parameters
// of its framework "tfx".
type PipelineSpec struct {
	// Provider that compiles and hosts the pipeline, by name.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	Provider string `json:"provider"`

	// Image holding the pipeline code.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// TfxComponents is the Python function that creates the pipeline's
	// components, e.g. "pipeline.create_components".
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	TfxComponents string `json:"tfxComponents"`

	// Env is set in the pipeline image while it is compiled.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Env []NamedValue `json:"env,omitempty"`

	// BeamArgs are passed to the compiler as beam_pipeline_args.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	BeamArgs []NamedValue `json:"beamArgs,omitempty"`
}

// Pipeline is an ML pipeline definition synchronised with a provider
// (kfp-operator v1alpha6).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mlp,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Pipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec PipelineSpec `json:"spec,omitempty"`
	// +optional
	Status Status `json:"status,omitempty"`
}

// PipelineList is a list of Pipelines.
//
// +kubebuilder:object:root=true
type PipelineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pipeline `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Pipeline{}, &PipelineList{})
}
