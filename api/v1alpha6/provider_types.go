package v1alpha6

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProviderSpec configures one pipeline backend (kfp-operator v1alpha6:
// spec.image is its provider CLI image; spec.serviceImage, added after
// v0.6, its provider service).
type ProviderSpec struct {
	// Image of the provider CLI.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// ServiceImage of the provider service.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ServiceImage string `json:"serviceImage,omitempty"`

	// ExecutionMode of the backend's compiler: v1 or v2.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	ExecutionMode string `json:"executionMode,omitempty"`

	// ServiceAccount every operation of this provider runs as.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// DefaultBeamArgs are passed to every pipeline compiled for this provider.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	DefaultBeamArgs []NamedValue `json:"defaultBeamArgs,omitempty"`

	// PipelineRootStorage is where pipelines keep their artifacts.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	PipelineRootStorage string `json:"pipelineRootStorage,omitempty"`

	// Parameters are provider-specific settings.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// Provider is a pipeline backend that the other kinds reference by name
// (kfp-operator v1alpha6).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mlprv,categories=kfp
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Provider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ProviderSpec `json:"spec,omitempty"`
	// +optional
	Status Status `json:"status,omitempty"`
}

// ProviderList is a list of Providers.
//
// +kubebuilder:object:root=true
type ProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Provider `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Provider{}, &ProviderList{})
}
