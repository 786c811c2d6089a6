package contract

import (
	"encoding/json"
	"fmt"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Version is the version of the JSON a provider and a compiler receive
// (contractVersion in each document). It changes only when a field is
// removed or changes meaning; added fields keep it.
const Version = "v1"

// CheckVersion refuses, in words a user can act on, a document whose
// contractVersion is not Version: reader is who reads it ("provider",
// "compiler"), doc the document ("resource", "provider-config",
// "pipeline-config"). A reader must not guess at a version it does not know.
func CheckVersion(reader, doc, version string) error {
	switch version {
	case Version:
		return nil
	case "":
		return fmt.Errorf("the %s has no contractVersion, but this %s understands only contractVersion %s: use a %s image made for this operator's version",
			doc, reader, Version, reader)
	}
	return fmt.Errorf("the %s has contractVersion %q, but this %s understands only contractVersion %s: use a %s image made for this operator's version",
		doc, version, reader, Version, reader)
}

// Resource is the resource a provider receives (param and file
// `resource`): the user's resource as the operator saw it, with the version
// of its spec that this operation brings the backend to.
type Resource struct {
	// ContractVersion is the version of the contract this document follows
	// (Version); a reader refuses one it does not know.
	ContractVersion string `json:"contractVersion"`
	// APIVersion of the resource, e.g. "pipelines.kubeflow.org/v1beta1".
	APIVersion string `json:"apiVersion"`
	// Kind of the resource: Pipeline, Run, RunSchedule, RunConfiguration or
	// Experiment.
	Kind string `json:"kind"`
	// Metadata identifies the resource in the cluster.
	Metadata Metadata `json:"metadata"`
	// Spec is the resource's spec as the API stores it (its kind's schema).
	Spec json.RawMessage `json:"spec"`
	// Status is what the backend already holds for the resource.
	Status ResourceStatus `json:"status"`
	// Version identifies Spec; a Pipeline's is also the pipeline version
	// the backend stores.
	Version string `json:"version"`
	// Pipeline is the pipeline a Run or RunSchedule runs, resolved from
	// spec.pipeline: absent for other kinds and for deletes.
	Pipeline *PipelineRef `json:"pipeline,omitempty"`
	// Parameters are present only for a Run whose spec.parameters use
	// valueFrom: all its parameters, each valueFrom resolved to the upstream
	// artifact's location (an optional one that could not be resolved is
	// left out, so the list may be empty). When present, a provider uses
	// them rather than spec.parameters; absent, spec.parameters hold only
	// values.
	Parameters *[]Parameter `json:"parameters,omitempty"`
	// TriggerIndicator says what started the run, for a Run or RunSchedule
	// (absent for other kinds): kfp-operator's triggerIndicator, which a
	// provider passes on in its run and runschedule bodies.
	TriggerIndicator *TriggerIndicator `json:"triggerIndicator,omitempty"`
}

// Parameter is a run parameter's name and value.
type Parameter struct {
	// Name of the parameter.
	Name string `json:"name"`
	// Value of the parameter.
	Value string `json:"value"`
}

// PipelineRef is a pipeline as the backend knows it.
type PipelineRef struct {
	// Name of the Pipeline resource (in the resource's namespace).
	Name string `json:"name"`
	// Version to run: the one spec.pipeline names, or the Pipeline's
	// current version.
	Version string `json:"version"`
	// ID is the pipeline's backend id, as its create reported it.
	ID string `json:"id"`
}

// Metadata identifies the resource.
type Metadata struct {
	// Name of the resource.
	Name string `json:"name"`
	// Namespace of the resource.
	Namespace string `json:"namespace"`
	// UID of the resource: tells a resource from a later one of the same name.
	UID string `json:"uid"`
	// Generation of the resource's spec.
	Generation int64 `json:"generation"`
	// Owner is the resource's controlling owner, e.g. the RunConfiguration
	// that made a Run or RunSchedule; absent when it has none.
	Owner *Owner `json:"owner,omitempty"`
}

// Owner names a resource's controlling owner.
type Owner struct {
	// Kind of the owner, e.g. "RunConfiguration".
	Kind string `json:"kind"`
	// Name of the owner, in the resource's namespace.
	Name string `json:"name"`
	// UID of the owner.
	UID string `json:"uid"`
}

// ResourceStatus is what the backend already holds for the resource: its
// provider and id, empty before the first create succeeded.
type ResourceStatus struct {
	// Provider the resource was synchronised with ("namespace/name") and
	// the id its backend gave it; both empty before the first create
	// succeeded.
	Provider pipelinesv1beta1.ProviderAndID `json:"provider"`
}

// ProviderConfig is the Provider a provider receives (param and file
// `provider-config`): its spec with images pinned to digests, and the
// artifact location resolved for this resource. Secrets are named, never
// included.
type ProviderConfig struct {
	// ContractVersion is the version of the contract this document follows
	// (Version); a reader refuses one it does not know.
	ContractVersion string `json:"contractVersion"`
	// Name of the Provider.
	Name string `json:"name"`
	// Namespace of the Provider.
	Namespace string `json:"namespace"`
	// Spec of the Provider, with spec.image and the frameworks' images
	// pinned to digests.
	Spec pipelinesv1beta1.ProviderSpec `json:"spec"`
	// ArtifactRepository is where this resource's artifacts go; absent when
	// no level names one.
	ArtifactRepository *ArtifactLocation `json:"artifactRepository,omitempty"`
	// ServiceURL is where the provider service answers, for a Provider with
	// spec.serviceImage (the helper calls it); absent for a CLI provider.
	ServiceURL string `json:"serviceURL,omitempty"`
}

// ArtifactLocation is where a resource's artifacts go, as resolved, with
// references to the Secrets holding credentials (never their contents).
type ArtifactLocation struct {
	// Source says which level decided: resource, namespace, provider or pipelineRootStorage.
	Source string `json:"source"`
	// Location is the artifacts' root as a URL, e.g. "s3://bucket/prefix"
	// or "gs://bucket/prefix".
	Location string `json:"location"`
	// Endpoint of an S3-compatible service.
	Endpoint string `json:"endpoint,omitempty"`
	// Region of the bucket.
	Region string `json:"region,omitempty"`
	// Insecure uses plain HTTP to the endpoint.
	Insecure bool `json:"insecure,omitempty"`
	// Secrets hold the credentials: named here, never included.
	Secrets []SecretKeyRef `json:"secrets,omitempty"`
	// Ref is the ConfigMap key the location was read from, if any.
	Ref *ConfigMapKeyRef `json:"configMapRef,omitempty"`
}

// SecretKeyRef names one key of a Secret and what it is for.
type SecretKeyRef struct {
	// Purpose of the key: accessKey, secretKey or serviceAccountKey.
	Purpose string `json:"purpose"`
	// Name of the Secret.
	Name string `json:"name"`
	// Key in the Secret.
	Key string `json:"key"`
}

// ConfigMapKeyRef records which ConfigMap key a location came from.
type ConfigMapKeyRef struct {
	// Name of the ConfigMap.
	Name string `json:"name"`
	// Key in the ConfigMap.
	Key string `json:"key"`
}

// CompileConfig is the compiler's --pipeline_config (param and file
// `pipeline-config`): what to compile, and the env it runs with.
type CompileConfig struct {
	// ContractVersion is the version of the contract this document follows
	// (Version); a reader refuses one it does not know.
	ContractVersion string `json:"contractVersion"`
	// Name of the Pipeline.
	Name string `json:"name"`
	// Namespace of the Pipeline.
	Namespace string `json:"namespace"`
	// Image of the pipeline (the Pipeline's spec.image), which the compile
	// step runs in.
	Image string `json:"image"`
	// Env of the Pipeline, also set in the compile step's environment.
	Env []pipelinesv1beta1.NamedValue `json:"env,omitempty"`
	// Framework of the Pipeline and its compile parameters.
	Framework pipelinesv1beta1.PipelineFramework `json:"framework"`
	// BeamArgs are the Provider's defaultBeamArgs.
	BeamArgs []pipelinesv1beta1.NamedValue `json:"beamArgs,omitempty"`
	// PipelineRoot is the resolved artifact location, if any.
	PipelineRoot string `json:"pipelineRoot,omitempty"`
}

// Output is what a provider writes to --output: the backend id on success,
// or an error in its own words. It carries no contractVersion: the
// operator reads any provider's output the same way.
type Output struct {
	// ID of the resource in the backend (for delete, the id deleted).
	ID string `json:"id,omitempty"`
	// Error says why the operation failed, in words a user can act on;
	// empty or absent on success.
	Error string `json:"error,omitempty"`
}

// RunParameters are the parameters a Run or RunSchedule runs with, as a
// provider must read them: res.Parameters when the operator sent them
// (valueFrom resolved), else spec's values. A valueFrom left unresolved
// (a RunSchedule's) is refused, naming the parameter.
func RunParameters(res Resource, spec []pipelinesv1beta1.RuntimeParameter) ([]Parameter, error) {
	if res.Parameters != nil {
		return *res.Parameters, nil
	}
	params := make([]Parameter, 0, len(spec))
	for _, p := range spec {
		if p.ValueFrom != nil {
			return nil, fmt.Errorf("parameter %q: valueFrom was not resolved (the operator resolves it for Runs, not for RunSchedules): give a value", p.Name)
		}
		params = append(params, Parameter{Name: p.Name, Value: p.Value})
	}
	return params, nil
}
