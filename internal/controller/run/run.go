// Package run is the Run controller: a thin Kind over the lifecycle engine.
// A Run is created once, starting a run in the backend, and never updated
// (its spec is immutable). Its create waits for the Pipeline it names
// (`name` or `name:version`, in its namespace) to be synchronised with the
// same provider, passes that pipeline's backend id and version to the
// provider, and records the version in status.observedPipelineVersion. Deleting a Run whose create PipelineRun is still
// running cancels that PipelineRun; then a Run that reached the backend is
// deleted from it (one that never did has nothing to delete). The finalizer
// holds the Run until then, and the skip-backend-deletion annotation lets it
// go without. Tests: run_test.go, with the whole operator.
package run

import (
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Kind is the Run kind for the lifecycle engine.
var Kind lifecycle.Kind[*pipelinesv1beta1.Run] = kind{}

type kind struct{}

func (kind) Traits() lifecycle.Traits {
	return lifecycle.Traits{Name: "run", CreateOnly: true, CancelOnDelete: true,
		RunsPipeline: true, ResolvesParameters: true, UsesArtifacts: true}
}

func (kind) New() *pipelinesv1beta1.Run { return &pipelinesv1beta1.Run{} }

func (kind) Inputs(r *pipelinesv1beta1.Run) lifecycle.Inputs {
	return lifecycle.Inputs{Spec: r.Spec, Pipeline: r.Spec.Pipeline, Parameters: r.Spec.Parameters,
		ArtifactRepository: r.Spec.ArtifactRepositoryRef}
}

// Prepare versions the Run by its spec.
func (kind) Prepare(r *pipelinesv1beta1.Run, _ *pipelinesv1beta1.Provider) (lifecycle.Prepared, error) {
	v, err := spechash.Of(r.Spec)
	return lifecycle.Prepared{Version: v}, err
}

// Record keeps the pipeline version the Run's create ran with
// (status.observedPipelineVersion) and the upstream runs its parameters
// were resolved from (status.dependencies).
func (kind) Record(r *pipelinesv1beta1.Run, out lifecycle.Outputs) {
	if out.PipelineVersion != "" {
		r.Status.ObservedPipelineVersion = out.PipelineVersion
	}
	if out.Dependencies != nil {
		r.Status.Dependencies = *out.Dependencies
	}
}
