package contract

import (
	"encoding/json"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Version is the version of the JSON a provider and a compiler receive
// (contractVersion in each document). It changes only when a field is
// removed or changes meaning; added fields keep it.
const Version = "v1"

// Resource is the resource a provider receives (param and file
// `resource`): the user's resource as the operator saw it, with the version
// of its spec that this operation brings the backend to.
type Resource struct {
	ContractVersion string          `json:"contractVersion"`
	APIVersion      string          `json:"apiVersion"`
	Kind            string          `json:"kind"`
	Metadata        Metadata        `json:"metadata"`
	Spec            json.RawMessage `json:"spec"`
	Status          ResourceStatus  `json:"status"`
	// Version identifies Spec; a Pipeline's is also the pipeline version
	// the backend stores.
	Version string `json:"version"`
}

// Metadata identifies the resource.
type Metadata struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	UID        string `json:"uid"`
	Generation int64  `json:"generation"`
}

// ResourceStatus is what the backend already holds for the resource: its
// provider and id, empty before the first create succeeded.
type ResourceStatus struct {
	Provider pipelinesv1beta1.ProviderAndID `json:"provider"`
}

// ProviderConfig is the Provider a provider receives (param and file
// `provider-config`): its spec with images pinned to digests, and the
// artifact location resolved for this resource. Secrets are named, never
// included.
type ProviderConfig struct {
	ContractVersion    string                        `json:"contractVersion"`
	Name               string                        `json:"name"`
	Namespace          string                        `json:"namespace"`
	Spec               pipelinesv1beta1.ProviderSpec `json:"spec"`
	ArtifactRepository *ArtifactLocation             `json:"artifactRepository,omitempty"`
}

// ArtifactLocation is where a resource's artifacts go, as resolved, with
// references to the Secrets holding credentials (never their contents).
type ArtifactLocation struct {
	// Source says which level decided: resource, namespace, provider or pipelineRootStorage.
	Source   string           `json:"source"`
	Location string           `json:"location"`
	Endpoint string           `json:"endpoint,omitempty"`
	Region   string           `json:"region,omitempty"`
	Insecure bool             `json:"insecure,omitempty"`
	Secrets  []SecretKeyRef   `json:"secrets,omitempty"`
	Ref      *ConfigMapKeyRef `json:"configMapRef,omitempty"`
}

// SecretKeyRef names one key of a Secret and what it is for.
type SecretKeyRef struct {
	Purpose string `json:"purpose"`
	Name    string `json:"name"`
	Key     string `json:"key"`
}

// ConfigMapKeyRef records which ConfigMap key a location came from.
type ConfigMapKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// CompileConfig is the compiler's --pipeline_config (param and file
// `pipeline-config`): what to compile, and the env it runs with.
type CompileConfig struct {
	ContractVersion string                             `json:"contractVersion"`
	Name            string                             `json:"name"`
	Namespace       string                             `json:"namespace"`
	Image           string                             `json:"image"`
	Env             []pipelinesv1beta1.NamedValue      `json:"env,omitempty"`
	Framework       pipelinesv1beta1.PipelineFramework `json:"framework"`
	BeamArgs        []pipelinesv1beta1.NamedValue      `json:"beamArgs,omitempty"`
	PipelineRoot    string                             `json:"pipelineRoot,omitempty"`
}

// Output is what a provider writes to --output: the backend id on success,
// or an error in its own words.
type Output struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}
