// Package runschedule is the RunSchedule controller: a thin Kind over the
// lifecycle engine.
package runschedule

import (
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/controllers/lifecycle"
)

// Kind is the RunSchedule kind for the lifecycle engine; its version hashes its spec.
var Kind = lifecycle.Kind[*pipelinesv1beta1.RunSchedule]{
	Name: "runschedule",
	New:  func() *pipelinesv1beta1.RunSchedule { return &pipelinesv1beta1.RunSchedule{} },
	Version: func(rs *pipelinesv1beta1.RunSchedule, _ *pipelinesv1beta1.Provider) (string, error) {
		return lifecycle.SpecHash(rs.Spec)
	},
	ArtifactRef: func(rs *pipelinesv1beta1.RunSchedule) *pipelinesv1beta1.ArtifactRepositoryRef {
		return rs.Spec.ArtifactRepositoryRef
	},
}
