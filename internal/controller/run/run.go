// Package run is the Run controller: a thin Kind over the lifecycle engine.
// A Run is created once (its spec is immutable); deleting a Run whose
// PipelineRun is still running cancels that PipelineRun.
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
}
