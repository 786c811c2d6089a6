// Package runschedule is the RunSchedule controller: a thin Kind over the
// lifecycle engine. Creating a RunSchedule creates a recurring run in the
// backend, once its cron expression is one a backend can run (otherwise
// InvalidSpec and nothing reaches a backend); a change of its spec updates
// that recurring run in place (the provider is given the id it created).
// Create and update wait for the Pipeline it names to be synchronised with
// the same provider and pass that pipeline's backend id and version; a
// RunSchedule naming a Pipeline without a version follows it: each new
// version of the Pipeline updates the recurring run.
// Deleting a RunSchedule waits for a running create or update to end, then
// deletes the recurring run from the backend; the finalizer holds it until
// that succeeded, and the skip-backend-deletion annotation lets it go
// without. Tests: runschedule_test.go, with the whole operator.
package runschedule

import (
	"fmt"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/cronspec"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Kind is the RunSchedule kind for the lifecycle engine; its version hashes its spec.
var Kind lifecycle.Kind[*pipelinesv1beta1.RunSchedule] = kind{}

type kind struct{}

func (kind) Traits() lifecycle.Traits {
	return lifecycle.Traits{Name: "runschedule", RunsPipeline: true, UsesArtifacts: true}
}

func (kind) New() *pipelinesv1beta1.RunSchedule { return &pipelinesv1beta1.RunSchedule{} }

func (kind) Inputs(rs *pipelinesv1beta1.RunSchedule) lifecycle.Inputs {
	return lifecycle.Inputs{Spec: rs.Spec, Pipeline: rs.Spec.Pipeline, ArtifactRepository: rs.Spec.ArtifactRepositoryRef}
}

func (kind) Prepare(rs *pipelinesv1beta1.RunSchedule, _ *pipelinesv1beta1.Provider) (lifecycle.Prepared, error) {
	// A schedule no backend can run is refused before one sees it (InvalidSpec, no PipelineRun).
	if err := cronspec.Validate(rs.Spec.Schedule.CronExpression); err != nil {
		return lifecycle.Prepared{}, fmt.Errorf("spec.schedule.cronExpression: %w", err)
	}
	v, err := spechash.Of(rs.Spec)
	return lifecycle.Prepared{Version: v}, err
}

func (kind) Record(*pipelinesv1beta1.RunSchedule, lifecycle.Outputs) {}
