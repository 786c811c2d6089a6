package lifecycle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
)

// Every kind through create, update (where it has one) and delete, each
// operation a PipelineRun of its own shared Task that Tekton would accept.
func TestEveryKindCreateUpdateDelete(t *testing.T) {
	f := setup(t)
	kinds := []struct {
		kind   string
		obj    lifecycle.Subject
		change func(lifecycle.Subject) // nil: create-only
	}{
		{"pipeline", newPipeline(f.ns, "k-pipeline"), func(o lifecycle.Subject) { o.(*pipelinesv1beta1.Pipeline).Spec.Image = "example.com/penguin:0.4.0" }},
		{"experiment", &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "k-experiment"},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "one"}},
			func(o lifecycle.Subject) { o.(*pipelinesv1beta1.Experiment).Spec.Description = "two" }},
		{"runschedule", &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "k-runschedule"},
			Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
				Schedule: pipelinesv1beta1.Schedule{CronExpression: "@daily"}}},
			func(o lifecycle.Subject) { o.(*pipelinesv1beta1.RunSchedule).Spec.Schedule.CronExpression = "@hourly" }},
		{"run", &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "k-run"},
			Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin:1"}}, nil},
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			obj := k.obj
			require.NoError(t, cp.Client.Create(ctx, obj))
			ops := []string{lifecycle.OpCreate}
			if k.change != nil {
				ops = append(ops, lifecycle.OpUpdate)
			}
			for i, op := range ops {
				if op == lifecycle.OpUpdate {
					update(t, obj, func(o lifecycle.Subject) { k.change(o) })
				}
				pr := eventuallyRun(t, f.ns, obj, i+1, op)
				assert.Equal(t, "kfp-"+k.kind+"-"+op, pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
				assert.Equal(t, k.kind, pr.Labels[lifecycle.LabelOwnerKind])
				require.NoError(t, generator.Validate(ctx, pr))
				finish(t, pr, true, k.kind+"-id", "", "")
				eventually(t, obj, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(obj))
				assert.Equal(t, k.kind+"-id", obj.CommonStatus().Provider.ID)
			}
			require.NoError(t, cp.Client.Delete(ctx, obj))
			del := eventuallyRun(t, f.ns, obj, len(ops)+1, lifecycle.OpDelete)
			assert.Equal(t, "kfp-"+k.kind+"-delete", del.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
			require.NoError(t, generator.Validate(ctx, del))
			eventually(t, obj, func(c *assert.CollectT) {
				sync := condition(obj, pipelinesv1beta1.ConditionSynchronized)
				if assert.NotNil(c, sync) {
					assert.Equal(c, string(pipelinesv1beta1.StateDeleting), sync.Reason)
				}
			})
			finish(t, del, true, k.kind+"-id", "", "")
			require.Eventually(t, func() bool {
				return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			}, wait, tick)
		})
	}
}

// A failed backend delete is retried and reported; the resource stays.
func TestFailedDeleteIsRetriedAndReported(t *testing.T) {
	f := setupWithBackoff(t, 2*time.Second)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sticky"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	finish(t, eventuallyRun(t, f.ns, e, 1, lifecycle.OpCreate), true, "exp-1", "", "")
	eventually(t, e, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))
	require.NoError(t, cp.Client.Delete(ctx, e))
	finish(t, eventuallyRun(t, f.ns, e, 2, lifecycle.OpDelete), true, "", "experiment has runs", "")
	eventually(t, e, readyMessageContains(e, "experiment has runs"))
	retry := eventuallyRun(t, f.ns, e, 3, lifecycle.OpDelete)
	assert.Equal(t, "1", retry.Labels[lifecycle.LabelAttempt])
	eventually(t, e, readyMessageContains(e, "attempt 2; the previous one: provider error"))
	finish(t, retry, true, "exp-1", "", "")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(e), e))
	}, wait, tick)
}

// A spec that goes back to an earlier version, and forward again, gets a run
// for every change (names never repeat an earlier run's).
func TestSpecRevertedAndRestoredSyncsEachTime(t *testing.T) {
	f := setup(t)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "flipflop"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "A"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	finish(t, eventuallyRun(t, f.ns, e, 1, lifecycle.OpCreate), true, "exp-1", "", "")
	eventually(t, e, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))
	versions := map[string]string{"A": e.Status.Version}
	for i, d := range []string{"B", "A", "B"} {
		update(t, e, func(o *pipelinesv1beta1.Experiment) { o.Spec.Description = d })
		finish(t, eventuallyRun(t, f.ns, e, i+2, lifecycle.OpUpdate), true, "exp-1", "", "")
		eventually(t, e, func(c *assert.CollectT) {
			readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e)(c)
			if want, ok := versions[d]; ok {
				assert.Equal(c, want, e.Status.Version)
			} else {
				assert.NotEqual(c, versions["A"], e.Status.Version)
			}
		})
		versions[d] = e.Status.Version
	}
	assert.Len(t, runsOf(t, f.ns, e), 4)
}

// A run that succeeded without a backend id is not taken as created.
func TestSuccessWithoutAnIDIsAFailure(t *testing.T) {
	f := setup(t)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "anonymous"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	finish(t, eventuallyRun(t, f.ns, e, 1, lifecycle.OpCreate), true, "", "", "")
	eventually(t, e, func(c *assert.CollectT) {
		cond := condition(e, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Contains(c, cond.Message, "succeeded but the provider reported no id")
		}
		assert.Empty(c, e.Status.Provider.ID)
	})
}
