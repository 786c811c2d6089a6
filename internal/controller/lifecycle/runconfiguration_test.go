package lifecycle_test

// The RunConfiguration controller, run with the whole operator: its
// RunSchedules and Runs are taken to the backend by the lifecycle engine.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/runconfiguration"
)

func ownedSchedules(t *testing.T, rc *pipelinesv1beta1.RunConfiguration) map[string]pipelinesv1beta1.RunSchedule {
	t.Helper()
	list := &pipelinesv1beta1.RunScheduleList{}
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{runconfiguration.LabelRunConfiguration: string(rc.UID)}))
	out := map[string]pipelinesv1beta1.RunSchedule{}
	for _, rs := range list.Items {
		if rs.DeletionTimestamp.IsZero() {
			out[rs.Spec.Schedule.CronExpression] = rs
		}
	}
	return out
}

func ownedRuns(t *testing.T, rc *pipelinesv1beta1.RunConfiguration, trigger string) []pipelinesv1beta1.Run {
	t.Helper()
	list := &pipelinesv1beta1.RunList{}
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(rc.Namespace),
		client.MatchingLabels{runconfiguration.LabelRunConfiguration: string(rc.UID), runconfiguration.LabelTrigger: trigger}))
	return list.Items
}

func TestRunConfigurationSchedulesAndTriggers(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "penguin")
	require.NoError(t, cp.Client.Create(ctx, p))
	finish(t, eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate), true, "pipeline-1", "", "")
	eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	v1 := p.Status.Version

	rc := &pipelinesv1beta1.RunConfiguration{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "training"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{
			Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin", Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "epochs", Value: "1"}}},
			Triggers: pipelinesv1beta1.Triggers{
				Schedules: []pipelinesv1beta1.Schedule{{CronExpression: "0 1 * * *"}, {CronExpression: "0 2 * * *"}},
				OnChange:  []pipelinesv1beta1.OnChangeTrigger{pipelinesv1beta1.OnChangePipeline, pipelinesv1beta1.OnChangeRunSpec},
			},
		},
	}
	require.NoError(t, cp.Client.Create(ctx, rc))
	eventually(t, rc, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(rc))
	schedules := ownedSchedules(t, rc)
	require.Len(t, schedules, 2)
	for _, rs := range schedules {
		assert.Equal(t, pipelinesv1beta1.PipelineReference("penguin:"+v1), rs.Spec.Pipeline, "the resolved version is pinned")
	}
	require.Len(t, ownedRuns(t, rc, runconfiguration.TriggerPipeline), 1)
	require.Len(t, ownedRuns(t, rc, runconfiguration.TriggerRunSpec), 1)

	// One schedule changes: only it is replaced; the other keeps its identity.
	kept := schedules["0 1 * * *"].UID
	update(t, rc, func(rc *pipelinesv1beta1.RunConfiguration) {
		rc.Spec.Triggers.Schedules[1].CronExpression = "0 3 * * *"
	})
	require.Eventually(t, func() bool {
		s := ownedSchedules(t, rc)
		_, old := s["0 2 * * *"]
		_, added := s["0 3 * * *"]
		return len(s) == 2 && !old && added
	}, wait, tick)
	assert.Equal(t, kept, ownedSchedules(t, rc)["0 1 * * *"].UID, "an unchanged schedule is never deleted and recreated")

	// The run spec changes: schedules are updated in place, and one Run starts.
	update(t, rc, func(rc *pipelinesv1beta1.RunConfiguration) { rc.Spec.Run.Parameters[0].Value = "2" })
	require.Eventually(t, func() bool {
		s := ownedSchedules(t, rc)["0 1 * * *"]
		return s.UID == kept && len(s.Spec.Parameters) == 1 && s.Spec.Parameters[0].Value == "2"
	}, wait, tick)
	require.Eventually(t, func() bool { return len(ownedRuns(t, rc, runconfiguration.TriggerRunSpec)) == 2 }, wait, tick)

	// The pipeline gets a new version: one Run of it.
	update(t, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = "99" })
	finish(t, eventuallyRun(t, f.ns, p, 2, lifecycle.OpUpdate), true, "pipeline-1", "", "")
	eventually(t, p, func(c *assert.CollectT) { assert.NotEqual(c, v1, p.Status.Version) })
	require.Eventually(t, func() bool { return len(ownedRuns(t, rc, runconfiguration.TriggerPipeline)) == 2 }, wait, tick)
	for _, r := range ownedRuns(t, rc, runconfiguration.TriggerPipeline) {
		if r.Spec.Pipeline != pipelinesv1beta1.PipelineReference("penguin:"+v1) {
			assert.Equal(t, pipelinesv1beta1.PipelineReference("penguin:"+p.Status.Version), r.Spec.Pipeline)
		}
	}
	for _, rs := range ownedSchedules(t, rc) {
		eventually(t, &rs, func(c *assert.CollectT) {
			assert.Equal(c, pipelinesv1beta1.PipelineReference("penguin:"+p.Status.Version), rs.Spec.Pipeline)
		})
	}

	// The Runs and RunSchedules it made go to the backend like any other.
	run := ownedRuns(t, rc, runconfiguration.TriggerPipeline)[0]
	eventuallyRun(t, f.ns, &run, 1, lifecycle.OpCreate)
}
