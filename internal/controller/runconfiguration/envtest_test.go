package runconfiguration_test

// The RunConfiguration controller, run with the whole operator against a
// real API server: its RunSchedules and Runs are taken to the backend by the
// lifecycle engine.

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// triggerOf is the trigger indicator the operation pr hands its provider.
func triggerOf(t *testing.T, pr *tektonv1.PipelineRun) *contract.TriggerIndicator {
	t.Helper()
	var res contract.Resource
	require.NoError(t, json.Unmarshal([]byte(fixture.Params(pr)[taskdef.ParamResource]), &res))
	return res.TriggerIndicator
}

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

func ownedSchedules(t *testing.T, rc *pipelinesv1beta1.RunConfiguration) map[string]pipelinesv1beta1.RunSchedule {
	t.Helper()
	list := &pipelinesv1beta1.RunScheduleList{}
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID)}))
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
		client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID), pipelinesv1beta1.LabelTrigger: trigger}))
	return list.Items
}

func TestRunConfigurationSchedulesAndTriggers(t *testing.T) {
	f := fixture.Setup(t, cp)
	p := fixture.NewPipeline(f.NS, "penguin")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 1, contract.OperationCreate), true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	v1 := p.Status.Version

	rc := &pipelinesv1beta1.RunConfiguration{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "training"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{
			Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin", Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "epochs", Value: "1"}}},
			Triggers: pipelinesv1beta1.Triggers{
				Schedules: []pipelinesv1beta1.Schedule{{CronExpression: "0 1 * * *"}, {CronExpression: "0 2 * * *"}},
				OnChange:  []pipelinesv1beta1.OnChangeTrigger{pipelinesv1beta1.OnChangePipeline, pipelinesv1beta1.OnChangeRunSpec},
			},
		},
	}
	require.NoError(t, cp.Client.Create(ctx, rc))
	// Ready only once what it made is: its RunSchedules and Runs are created
	// in the backend first.
	f.Eventually(t, rc, fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(rc))
	f.Eventually(t, rc, fixture.ReadyMessageContains(rc, "waiting for"))
	assert.Zero(t, rc.Status.ObservedGeneration, "not settled yet")
	schedules := ownedSchedules(t, rc)
	require.Len(t, schedules, 2)
	for _, rs := range schedules {
		create := f.EventuallyRun(t, &rs, 1, contract.OperationCreate)
		assert.Equal(t, &contract.TriggerIndicator{Type: "schedule", Source: rs.Name, SourceNamespace: f.NS}, triggerOf(t, create),
			"kfp-operator's indicator: the RunSchedule itself")
		f.Finish(t, create, true, "schedule-"+rs.Name, "", "")
	}
	for trigger, want := range map[string]contract.TriggerIndicator{
		pipelinesv1beta1.TriggerLabelPipeline: {Type: "onChangePipeline", Source: "penguin", SourceNamespace: f.NS},
		pipelinesv1beta1.TriggerLabelRunSpec:  {Type: "onChangeRunSpec", Source: "training", SourceNamespace: f.NS},
	} {
		for _, r := range ownedRuns(t, rc, trigger) {
			create := f.EventuallyRun(t, &r, 1, contract.OperationCreate)
			assert.Equal(t, &want, triggerOf(t, create), trigger)
			f.Finish(t, create, true, "run-"+r.Name, "", "")
		}
	}
	f.Eventually(t, rc, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(rc))
	assert.Equal(t, rc.Generation, rc.Status.ObservedGeneration)
	for _, rs := range schedules {
		assert.Equal(t, pipelinesv1beta1.PipelineReference("penguin:"+v1), rs.Spec.Pipeline, "the resolved version is pinned")
	}
	require.Len(t, ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelPipeline), 1)
	require.Len(t, ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelRunSpec), 1)

	// One schedule changes: only it is replaced; the other keeps its identity.
	kept := schedules["0 1 * * *"].UID
	fixture.Update(t, f, rc, func(rc *pipelinesv1beta1.RunConfiguration) {
		rc.Spec.Triggers.Schedules[1].CronExpression = "0 3 * * *"
	})
	require.Eventually(t, func() bool {
		s := ownedSchedules(t, rc)
		_, old := s["0 2 * * *"]
		_, added := s["0 3 * * *"]
		return len(s) == 2 && !old && added
	}, fixture.Wait, fixture.Tick)
	assert.Equal(t, kept, ownedSchedules(t, rc)["0 1 * * *"].UID, "an unchanged schedule is never deleted and recreated")

	// The run spec changes: schedules are updated in place, and one Run starts.
	fixture.Update(t, f, rc, func(rc *pipelinesv1beta1.RunConfiguration) { rc.Spec.Run.Parameters[0].Value = "2" })
	require.Eventually(t, func() bool {
		s := ownedSchedules(t, rc)["0 1 * * *"]
		return s.UID == kept && len(s.Spec.Parameters) == 1 && s.Spec.Parameters[0].Value == "2"
	}, fixture.Wait, fixture.Tick)
	require.Eventually(t, func() bool { return len(ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelRunSpec)) == 2 }, fixture.Wait, fixture.Tick)

	// The pipeline gets a new version: one Run of it.
	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = "99" })
	f.Finish(t, f.EventuallyRun(t, p, 2, contract.OperationUpdate), true, "pipeline-1", "", "")
	f.Eventually(t, p, func(c *assert.CollectT) { assert.NotEqual(c, v1, p.Status.Version) })
	require.Eventually(t, func() bool { return len(ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelPipeline)) == 2 }, fixture.Wait, fixture.Tick)
	for _, r := range ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelPipeline) {
		if r.Spec.Pipeline != pipelinesv1beta1.PipelineReference("penguin:"+v1) {
			assert.Equal(t, pipelinesv1beta1.PipelineReference("penguin:"+p.Status.Version), r.Spec.Pipeline)
		}
	}
	for _, rs := range ownedSchedules(t, rc) {
		f.Eventually(t, &rs, func(c *assert.CollectT) {
			assert.Equal(c, pipelinesv1beta1.PipelineReference("penguin:"+p.Status.Version), rs.Spec.Pipeline)
		})
	}

	// The Runs and RunSchedules it made go to the backend like any other.
	run := ownedRuns(t, rc, pipelinesv1beta1.TriggerLabelPipeline)[0]
	f.EventuallyRun(t, &run, 1, contract.OperationCreate)
}

// A RunConfiguration whose RunSchedules are all refused is not Ready.
func TestRunConfigurationReportsRefusedChildren(t *testing.T) {
	f := fixture.Setup(t, cp)
	outsider := f.NewNamespace(t)
	rc := &pipelinesv1beta1.RunConfiguration{
		ObjectMeta: metav1.ObjectMeta{Namespace: outsider, Name: "nightly"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{
			Run:      pipelinesv1beta1.RunSpec{Provider: pipelinesv1beta1.ProviderReference(f.NS + "/kfp"), Pipeline: "penguin:v1"},
			Triggers: pipelinesv1beta1.Triggers{Schedules: []pipelinesv1beta1.Schedule{{CronExpression: "0 1 * * *"}}},
		},
	}
	require.NoError(t, cp.Client.Create(ctx, rc))
	f.Eventually(t, rc, func(c *assert.CollectT) {
		cond := fixture.Condition(rc, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Equal(c, pipelinesv1beta1.ReasonOwnedResourceNotReady, cond.Reason, cond.Message)
			assert.Contains(c, cond.Message, "NamespaceNotAllowed")
		}
		assert.Equal(c, rc.Generation, rc.Status.ObservedGeneration, "a settled outcome")
	})

	// Admitted, its RunSchedule meets the next problem: no Pipeline penguin
	// in its namespace. The RunConfiguration says so.
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) { p.Spec.AllowedNamespaces = []string{outsider} })
	f.Eventually(t, rc, func(c *assert.CollectT) {
		fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonOwnedResourceNotReady)(rc)(c)
		fixture.ReadyMessageContains(rc, "PipelineNotFound", outsider+"/penguin does not exist")(c)
	})
}
