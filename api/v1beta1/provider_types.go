package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ExecutionMode selects the pipeline execution mode of the backend. The
// empty string is admitted and means v2, the default: kfp-operator
// deprecated the field after v0.7.0, ignores it and defaults it to "", so
// its users' manifests may say executionMode: "".
// +kubebuilder:validation:Enum=v1;v2;""
type ExecutionMode string

// Execution modes.
const (
	ExecutionModeV1 ExecutionMode = "v1"
	ExecutionModeV2 ExecutionMode = "v2"
	// DefaultExecutionMode is what an unset or empty executionMode means.
	DefaultExecutionMode = ExecutionModeV2
)

// Effective is the execution mode m stands for: m, or DefaultExecutionMode
// when m is empty. Read an execution mode through it, never directly.
func (m ExecutionMode) Effective() ExecutionMode {
	if m == "" {
		return DefaultExecutionMode
	}
	return m
}

// ProviderSpec configures one pipeline backend: the image the shared Tasks run
// to talk to it, the service account its PipelineRuns run as, and who may use it.
//
// +kubebuilder:validation:XValidation:rule="has(self.image) || has(self.serviceImage)",message="set image (a CLI provider image, run by the shared Tasks) or serviceImage (a provider service the operator runs)"
// +kubebuilder:validation:XValidation:rule="has(self.serviceImage) || ((!has(self.podTemplateEnv) || size(self.podTemplateEnv) == 0) && (!has(self.podTemplateVolumes) || size(self.podTemplateVolumes) == 0) && (!has(self.podTemplateVolumeMounts) || size(self.podTemplateVolumeMounts) == 0))",message="podTemplateEnv, podTemplateVolumes and podTemplateVolumeMounts configure the pod of a provider service: set them only with serviceImage (the shared Tasks that run a CLI provider's image are shared by every Provider of the namespace)"
type ProviderSpec struct {
	// Image of a CLI provider, run by the shared Tasks for every operation
	// (the contract in tasks/README.md). One of image and serviceImage; where
	// both are set (kfp-operator before v0.7 ran both), serviceImage serves
	// the provider and image is not used (the Ready condition says so).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// ServiceImage of a provider service (kfp-operator's provider-service
	// HTTP API): the operator runs it as a Deployment and Service in the
	// workflow namespace, as serviceAccount, and the shared Tasks call it.
	// One of image and serviceImage; it wins where both are set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ServiceImage string `json:"serviceImage,omitempty"`

	// ExecutionMode of the backend: v1 or v2 (the default). kfp-operator's
	// executionMode: "" is admitted and means v2 too.
	// +optional
	// +kubebuilder:default=v2
	ExecutionMode ExecutionMode `json:"executionMode,omitempty"`

	// ServiceAccount every PipelineRun of this provider runs as, in the
	// workflow namespace. The operator checks it exists; it never creates it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message=`must be a service account name (DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)`
	ServiceAccount string `json:"serviceAccount"`

	// DefaultBeamArgs are passed to every pipeline compiled for this provider.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	DefaultBeamArgs []NamedValue `json:"defaultBeamArgs,omitempty"`

	// PipelineRootStorage is the last-resort artifact location, e.g.
	// "gs://bucket/pipelines"; see artifactRepository.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	PipelineRootStorage string `json:"pipelineRootStorage,omitempty"`

	// Parameters are provider-specific settings handed to the provider image.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]apiextensionsv1.JSON `json:"parameters,omitempty"`

	// Frameworks are the pipeline frameworks this provider can compile, each
	// with the compiler image that injects itself into a pipeline image.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	Frameworks []Framework `json:"frameworks,omitempty"`

	// AllowedNamespaces may reference this provider in addition to its own
	// namespace. Empty means only its own namespace; "*" admits every namespace.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule=`self == '*' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message=`must be a namespace name (DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit) or "*" for every namespace`
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// ArtifactRepository is the default artifact repository of this
	// provider's runs, used when neither the resource nor its namespace names one.
	// +optional
	ArtifactRepository *ArtifactRepository `json:"artifactRepository,omitempty"`

	// PipelineImagePullSecrets name image pull Secrets, in the workflow
	// namespace, that compile pods use to pull the compiler and pipeline
	// images. None by default: a compile pod runs the image a Pipeline's
	// author names, and never borrows the service account's pull secrets,
	// which could pull any image those credentials can read.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	PipelineImagePullSecrets []PullSecretReference `json:"pipelineImagePullSecrets,omitempty"`

	// PodTemplateEnv is added to the environment of the provider service's
	// container (kfp-operator's field of that name; serviceImage only).
	// The variables the operator sets there (PROVIDERNAME,
	// PIPELINEROOTSTORAGE, PARAMETERS_*, OPERATORWEBHOOK, SERVER_PORT,
	// METRICS_PORT, POD_NAMESPACE, in any case: upper or lower case at
	// admission, mixed case by the operator) are refused: the operator's
	// values always win. With a shared workflowNamespace, a Provider from
	// another namespace may not take values from Secrets or ConfigMaps
	// (valueFrom secretKeyRef, configMapKeyRef): they would be other
	// tenants'.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule=`!(self.name in ['PROVIDERNAME', 'PIPELINEROOTSTORAGE', 'OPERATORWEBHOOK', 'SERVER_PORT', 'METRICS_PORT', 'POD_NAMESPACE', 'providername', 'pipelinerootstorage', 'operatorwebhook', 'server_port', 'metrics_port', 'pod_namespace']) && !self.name.startsWith('PARAMETERS_') && !self.name.startsWith('parameters_')`,message=`is set by the operator on the provider service (PROVIDERNAME, PIPELINEROOTSTORAGE, PARAMETERS_*, OPERATORWEBHOOK, SERVER_PORT, METRICS_PORT, POD_NAMESPACE) and cannot be overridden; for PIPELINEROOTSTORAGE or PARAMETERS_* set spec.pipelineRootStorage or spec.parameters`
	// +contract:omit
	PodTemplateEnv []corev1.EnvVar `json:"podTemplateEnv,omitempty"`

	// PodTemplateVolumes are added to the provider service's pod
	// (kfp-operator's field of that name; serviceImage only), for
	// podTemplateVolumeMounts to mount. Only the volume types Pod Security
	// `restricted` allows are admitted (emptyDir, configMap, secret,
	// projected, downwardAPI, persistentVolumeClaim, ephemeral, csi): never
	// hostPath. With a shared workflowNamespace, a Provider from another
	// namespace may use only emptyDir, downwardAPI and projected volumes of
	// serviceAccountToken, downwardAPI, clusterTrustBundle or podCertificate
	// sources: the others would reach other tenants' Secrets, ConfigMaps
	// and volumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:rule=`!has(self.hostPath)`,message=`hostPath volumes are refused: they would give the provider service its node's filesystem`
	// +kubebuilder:validation:items:XValidation:rule=`!(has(self.gcePersistentDisk) || has(self.awsElasticBlockStore) || has(self.gitRepo) || has(self.nfs) || has(self.iscsi) || has(self.glusterfs) || has(self.rbd) || has(self.flexVolume) || has(self.cinder) || has(self.cephfs) || has(self.flocker) || has(self.fc) || has(self.azureFile) || has(self.vsphereVolume) || has(self.quobyte) || has(self.azureDisk) || has(self.photonPersistentDisk) || has(self.portworxVolume) || has(self.scaleIO) || has(self.storageos) || has(self.image))`,message=`must be an emptyDir, configMap, secret, projected, downwardAPI, persistentVolumeClaim, ephemeral or csi volume (the types Pod Security restricted allows)`
	// +kubebuilder:validation:items:XValidation:rule=`self.name != 'events-token'`,message=`events-token is the name of the operator's own volume in the provider service's pod`
	// +contract:omit
	PodTemplateVolumes []corev1.Volume `json:"podTemplateVolumes,omitempty"`

	// PodTemplateVolumeMounts are added to the provider service's
	// container (kfp-operator's field of that name; serviceImage only),
	// each mounting one of podTemplateVolumes (the operator refuses one
	// that names another volume).
	// +optional
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=32
	// +contract:omit
	PodTemplateVolumeMounts []corev1.VolumeMount `json:"podTemplateVolumeMounts,omitempty"`
}

// PullSecretReference names an image pull Secret of the workflow namespace.
type PullSecretReference struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message=`must be a Secret name (DNS-1123 subdomain)`
	Name string `json:"name"`
}

// Framework names a pipeline framework and its compiler image.
type Framework struct {
	// Name of the framework, e.g. "tfx" or "kfpsdk".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message=`must be a framework name (DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit), e.g. tfx`
	Name string `json:"name"`

	// Image of the framework's compiler.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`

	// Patches change the pipeline definition a provider service receives
	// (kfp-operator's pipelineDefinition JSON, e.g. to add beam args to
	// /framework/parameters), in order. CLI providers receive them in
	// their provider configuration and apply them as they see fit.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Patches []Patch `json:"patches,omitempty"`
}

// PatchType is how a Patch's payload applies.
// +kubebuilder:validation:Enum=json;merge
type PatchType string

// Patch types.
const (
	// PatchJSON is an RFC 6902 JSON Patch: a list of operations.
	PatchJSON PatchType = "json"
	// PatchMerge is an RFC 7386 JSON merge patch: an object merged in.
	PatchMerge PatchType = "merge"
)

// Patch is one change to a pipeline definition.
// +kubebuilder:validation:XValidation:rule="has(self.payload) != has(self.patch)",message="set payload (the patch document; patch is its deprecated spelling), not both"
type Patch struct {
	// Type: json (RFC 6902) or merge (RFC 7386).
	// +required
	Type PatchType `json:"type"`
	// Payload is the patch document, as JSON text.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Payload string `json:"payload,omitempty"`
	// Deprecated: Patch is Payload as kfp-operator's v0.7.0 docs spell it
	// (its own API, which keeps unknown Provider fields, ignores it there);
	// taken as the payload so a manifest copied from them does what it says.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Patch string `json:"patch,omitempty"`
}

// Document is the patch document: Payload, or Patch where only it is set.
func (p Patch) Document() string {
	if p.Payload != "" {
		return p.Payload
	}
	return p.Patch
}

// ProviderStatus reports what the operator resolved and deployed for a Provider.
type ProviderStatus struct {
	// ObservedGeneration is the metadata.generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Image is what the shared Tasks run as the provider step, pinned to
	// its digest: spec.image, or for a provider service the operator's
	// helper image, which calls the service.
	// +optional
	Image string `json:"image,omitempty"`

	// ServiceImage is spec.serviceImage pinned to its digest.
	// +optional
	ServiceImage string `json:"serviceImage,omitempty"`

	// ServiceURL is where the shared Tasks reach the provider service.
	// +optional
	ServiceURL string `json:"serviceURL,omitempty"`

	// Frameworks are the spec's frameworks with images pinned to digests.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	Frameworks []Framework `json:"frameworks,omitempty"`

	// WorkflowNamespace is where this provider's PipelineRuns and shared Tasks live.
	// +optional
	WorkflowNamespace string `json:"workflowNamespace,omitempty"`

	// Tasks are the names of the shared Tasks deployed for this provider.
	// +optional
	// +listType=set
	Tasks []string `json:"tasks,omitempty"`

	// Users counts, per kind, the resources (in any namespace) that
	// reference this provider; kinds with none are left out. A Provider
	// being deleted stays while any are left.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +kubebuilder:validation:MaxItems=5
	Users []ProviderUsers `json:"users,omitempty"`

	// Conditions: Ready and Synchronized.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProviderUsers is how many resources of one kind reference a provider.
type ProviderUsers struct {
	// Kind of the resources.
	// +kubebuilder:validation:Enum=Pipeline;Experiment;RunSchedule;Run;RunConfiguration
	Kind string `json:"kind"`

	// Count of resources of Kind referencing the provider.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// Provider is a pipeline backend that the other kinds reference by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=mlprv,categories=kfp
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Synchronized",type=string,JSONPath=`.status.conditions[?(@.type=="Synchronized")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Provider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ProviderSpec `json:"spec"`
	// +optional
	Status ProviderStatus `json:"status,omitempty"`
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
