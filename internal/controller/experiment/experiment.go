// Package experiment is the Experiment controller: a thin Kind over the
// lifecycle engine. Creating an Experiment creates it in the backend; a
// change of its spec updates it there. Deleting an Experiment waits for a
// running create or update to end, then deletes it from the backend; the
// finalizer holds it until that succeeded (a refusal, such as an experiment
// that still has runs, is reported and retried), and the
// skip-backend-deletion annotation lets it go without. Tests:
// experiment_test.go, with the whole operator.
package experiment

import (
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Kind is the Experiment kind for the lifecycle engine; its version hashes its spec.
var Kind lifecycle.Kind[*pipelinesv1beta1.Experiment] = kind{}

type kind struct{}

func (kind) Traits() lifecycle.Traits { return lifecycle.Traits{Name: "experiment"} }

func (kind) New() *pipelinesv1beta1.Experiment { return &pipelinesv1beta1.Experiment{} }

func (kind) Inputs(e *pipelinesv1beta1.Experiment) lifecycle.Inputs {
	return lifecycle.Inputs{Spec: e.Spec}
}

func (kind) Prepare(e *pipelinesv1beta1.Experiment, _ *pipelinesv1beta1.Provider) (lifecycle.Prepared, error) {
	v, err := spechash.Of(e.Spec)
	return lifecycle.Prepared{Version: v}, err
}

func (kind) Record(*pipelinesv1beta1.Experiment, lifecycle.Outputs) {}
