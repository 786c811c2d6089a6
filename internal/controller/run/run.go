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
)

// Kind is the Run kind for the lifecycle engine.
var Kind = lifecycle.Kind[*pipelinesv1beta1.Run]{
	Traits: lifecycle.Traits{Name: "run", CreateOnly: true, CancelOnDelete: true},
	New:    func() *pipelinesv1beta1.Run { return &pipelinesv1beta1.Run{} },
	Version: func(r *pipelinesv1beta1.Run, _ *pipelinesv1beta1.Provider) (string, error) {
		return lifecycle.SpecHash(r.Spec)
	},
	ArtifactRef: func(r *pipelinesv1beta1.Run) *pipelinesv1beta1.ArtifactRepositoryRef {
		return r.Spec.ArtifactRepositoryRef
	},
	Pipeline:              func(r *pipelinesv1beta1.Run) pipelinesv1beta1.PipelineReference { return r.Spec.Pipeline },
	RecordPipelineVersion: func(r *pipelinesv1beta1.Run, v string) { r.Status.ObservedPipelineVersion = v },
	Parameters:            func(r *pipelinesv1beta1.Run) []pipelinesv1beta1.RuntimeParameter { return r.Spec.Parameters },
	RecordDependencies:    func(r *pipelinesv1beta1.Run, deps pipelinesv1beta1.Dependencies) { r.Status.Dependencies = deps },
}
