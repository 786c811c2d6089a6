package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProviderReference names a Provider as "name" (the resource's own namespace)
// or "namespace/name": a namespace is a DNS-1123 label, a name a DNS-1123
// subdomain.
// +kubebuilder:validation:MaxLength=317
// +kubebuilder:validation:XValidation:rule=`self.matches('^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$') && self.matches('^([^/]+/)?[^/]{1,253}$')`,message=`must be NAME or NAMESPACE/NAME (DNS-1123 names: lower-case letters, digits, '-' and '.'), e.g. kfp or team-a/kfp`
type ProviderReference string

// NamedValue is a name with a string value.
type NamedValue struct {
	// Name of the value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value; may be empty.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Value string `json:"value,omitempty"`
}

// ArtifactRepositoryRef picks an artifact repository from a ConfigMap in the
// resource's namespace, in the format Argo Workflows uses: each key holds one
// repository configuration.
type ArtifactRepositoryRef struct {
	// ConfigMap holding the repositories; defaults to "artifact-repositories".
	// +optional
	// +kubebuilder:default=artifact-repositories
	// +kubebuilder:validation:MaxLength=253
	ConfigMap string `json:"configMap,omitempty"`

	// Key of the repository in the ConfigMap; when empty, the key named by the
	// ConfigMap's "workflows.argoproj.io/default-artifact-repository" annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// ProviderAndID records which provider a resource was synchronised with and
// the identifier the provider's backend gave it.
type ProviderAndID struct {
	// Name of the provider as "namespace/name".
	// +optional
	Name string `json:"name,omitempty"`

	// ID of the resource in the provider's backend.
	// +optional
	ID string `json:"id,omitempty"`
}

// Status is the part of the status every user resource shares.
type Status struct {
	// Provider the resource is synchronised with, and its backend id.
	// +optional
	Provider ProviderAndID `json:"provider,omitempty"`

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
