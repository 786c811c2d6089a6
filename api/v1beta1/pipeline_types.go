package v1beta1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipelineSpec is an ML pipeline packaged as an image, compiled by the
// provider's compiler for the named framework.
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.map(e, has(e.value) ? size(e.value) : 0).sum() <= 65536",message="the env values may total at most 65536 bytes"
type PipelineSpec struct {
	// Provider that compiles and hosts the pipeline.
	// +required
	Provider ProviderReference `json:"provider"`

	// Image holding the pipeline code.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// Env is set in the pipeline image while it is compiled.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Env []NamedValue `json:"env,omitempty"`

	// Framework the pipeline is written in; the provider must list it.
	// +required
	Framework PipelineFramework `json:"framework"`

	// ArtifactRepositoryRef overrides the namespace's default artifact repository.
	// +optional
	ArtifactRepositoryRef *ArtifactRepositoryRef `json:"artifactRepositoryRef,omitempty"`
}

// PipelineFramework names a framework and its compile parameters.
type PipelineFramework struct {
	// Name of the framework, matching one of the provider's frameworks.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message=`must be a framework name (DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit), e.g. tfx`
	Name string `json:"name"`

	// Parameters for the framework's compiler.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// Pipeline is an ML pipeline definition synchronised with a provider.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=mlp,categories=kfp
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Pipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PipelineSpec `json:"spec"`
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
