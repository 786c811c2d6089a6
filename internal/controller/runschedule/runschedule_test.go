package runschedule_test

// The RunSchedule kind, run with the whole operator against a real API server.

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

// A runschedule through create, update and delete, each operation a PipelineRun of
// its own shared Task that Tekton would accept.
func TestCreateUpdateDelete(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	f.CreateUpdateDelete(t, "runschedule", &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "k-runschedule"},
		Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Schedule: pipelinesv1beta1.Schedule{CronExpression: "@daily"}}}, func(o lifecycle.Subject) { o.(*pipelinesv1beta1.RunSchedule).Spec.Schedule.CronExpression = "@hourly" })
}

// A cron expression the schema lets through but no backend can run is
// refused by the parser: InvalidSpec naming the problem, no PipelineRun.
func TestRunScheduleWithAnUnparsableCronIsRefused(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	for name, expr := range map[string]string{"out-of-range": "99 99 99 99 99", "zero-step": "*/0 * * * *", "too-often": "@every 10s"} {
		rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
			Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
				Schedule: pipelinesv1beta1.Schedule{CronExpression: expr}}}
		require.NoError(t, cp.Client.Create(ctx, rs), "the schema admits %q", expr)
		f.Eventually(t, rs, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(rs))
		assert.Contains(t, fixture.Condition(rs, pipelinesv1beta1.ConditionReady).Message, "spec.schedule.cronExpression")
		assert.Empty(t, f.RunsOf(t, rs), "nothing reaches a backend")
	}
}

func TestRunScheduleCreateUpdate(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.SyncedPipeline(t, "penguin")
	rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "nightly"},
		Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Schedule: pipelinesv1beta1.Schedule{CronExpression: "0 2 * * *"}}}
	require.NoError(t, cp.Client.Create(ctx, rs))
	create := f.EventuallyRun(t, rs, 1, contract.OperationCreate)
	f.Finish(t, create, true, "schedule-1", "", "")
	f.Eventually(t, rs, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(rs))
	fixture.Update(t, f, rs, func(rs *pipelinesv1beta1.RunSchedule) { rs.Spec.Schedule.CronExpression = "0 3 * * *" })
	update := f.EventuallyRun(t, rs, 2, contract.OperationUpdate)
	var resource struct {
		Spec   pipelinesv1beta1.RunScheduleSpec
		Status struct {
			Provider pipelinesv1beta1.ProviderAndID
		}
	}
	require.NoError(t, json.Unmarshal([]byte(fixture.Params(update)[taskdef.ParamResource]), &resource))
	assert.Equal(t, "0 3 * * *", resource.Spec.Schedule.CronExpression)
	assert.Equal(t, "schedule-1", resource.Status.Provider.ID, "the provider updates what it created")
}
