package completion_test

// The completion controller with the whole operator against a real API
// server: a Tekton provider's PipelineRun ending completes its Run, and
// one that is not trusted does not.

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/completion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

// mlRun is a PipelineRun as the Tekton provider makes it for run, ended.
func mlRun(t *testing.T, ns, name string, run *pipelinesv1beta1.Run, status corev1.ConditionStatus) *tektonv1.PipelineRun {
	pr := &tektonv1.PipelineRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelRunUID: string(run.UID)},
			Annotations: map[string]string{contract.AnnotationResource: "Run " + run.Namespace + "/" + run.Name}},
		Spec: tektonv1.PipelineRunSpec{PipelineRef: &tektonv1.PipelineRef{Name: "demo"}},
	}
	require.NoError(t, cp.Client.Create(ctx, pr))
	pr.Status.SetCondition(&apis.Condition{Type: apis.ConditionSucceeded, Status: status, Reason: "Done", Message: "Tasks Completed: 3"})
	require.NoError(t, cp.Client.Status().Update(ctx, pr))
	return pr
}

func TestRunCompletesWhenItsPipelineRunEnds(t *testing.T) {
	f := fixture.Setup(t, cp)
	r := f.SyncedRun(t, "train", "ml-run-1")
	mlRun(t, f.NS, "ml-run-1", r, corev1.ConditionTrue)
	f.Eventually(t, r, func(c *assert.CollectT) {
		assert.Equal(c, pipelinesv1beta1.CompletionStateSucceeded, r.Status.CompletionState)
		assert.Equal(c, "Tasks Completed: 3", r.Status.CompletionMessage)
		assert.NotNil(c, r.Status.MarkedCompletedAt)
	})
}

func TestUntrustedPipelineRunsCompleteNothing(t *testing.T) {
	f := fixture.Setup(t, cp)
	r := f.SyncedRun(t, "train", "ml-run-1")
	elsewhere := f.NewNamespace(t)
	mlRun(t, elsewhere, "ml-run-1", r, corev1.ConditionFalse) // another namespace: a tenant's forgery
	mlRun(t, f.NS, "ml-run-2", r, corev1.ConditionFalse)      // not the run the provider reported
	real := mlRun(t, f.NS, "ml-run-1", r, corev1.ConditionTrue)
	f.Eventually(t, r, func(c *assert.CollectT) {
		assert.Equal(c, pipelinesv1beta1.CompletionStateSucceeded, r.Status.CompletionState, "only %s counts", real.Name)
	})
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(r), r))
	assert.Equal(t, pipelinesv1beta1.CompletionStateSucceeded, r.Status.CompletionState)
}

// scheduledRun is a PipelineRun as a RunSchedule's CronJob makes it for a
// RunConfiguration, succeeded at completed.
func scheduledRun(t *testing.T, ns, name string, rs *pipelinesv1beta1.RunSchedule, rc *pipelinesv1beta1.RunConfiguration, completed time.Time) {
	endedRun(t, ns, name, rs, rc, completed, corev1.ConditionTrue)
}

// endedRun is a scheduled run that ended with status at completed.
func endedRun(t *testing.T, ns, name string, rs *pipelinesv1beta1.RunSchedule, rc *pipelinesv1beta1.RunConfiguration, completed time.Time, status corev1.ConditionStatus) {
	pr := &tektonv1.PipelineRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelRunConfigurationUID: string(rc.UID),
				contract.LabelRunScheduleUID: string(rs.UID)},
			Annotations: map[string]string{contract.AnnotationRunConfiguration: rc.Namespace + "/" + rc.Name,
				contract.AnnotationResource: "RunSchedule " + rs.Namespace + "/" + rs.Name,
				contract.AnnotationOutputs:  `[{"component":"train","output":"model","uri":"file:///kfp/artifacts/$(context.pipelineRun.name)/train/model"}]`}},
		Spec: tektonv1.PipelineRunSpec{PipelineRef: &tektonv1.PipelineRef{Name: "demo"}},
	}
	require.NoError(t, cp.Client.Create(ctx, pr))
	pr.Status.SetCondition(&apis.Condition{Type: apis.ConditionSucceeded, Status: status, Reason: "Done"})
	pr.Status.CompletionTime = &metav1.Time{Time: completed}
	require.NoError(t, cp.Client.Status().Update(ctx, pr))
}

// scheduledRunConfiguration is RunConfiguration "training" with one
// schedule, whose RunSchedule the provider created as CronJob "nightly".
func scheduledRunConfiguration(t *testing.T, f *fixture.Fixture) (*pipelinesv1beta1.RunConfiguration, *pipelinesv1beta1.RunSchedule) {
	f.SyncedPipeline(t, "demo")
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "training"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo",
			Artifacts: []pipelinesv1beta1.OutputArtifact{{Name: "model", Path: "train:model:0"}}},
			Triggers: pipelinesv1beta1.Triggers{Schedules: []pipelinesv1beta1.Schedule{{CronExpression: "@daily"}}}}}
	require.NoError(t, cp.Client.Create(ctx, rc))
	// Its RunSchedule, created in the backend as CronJob "nightly".
	var rs pipelinesv1beta1.RunSchedule
	require.Eventually(t, func() bool {
		var l pipelinesv1beta1.RunScheduleList
		_ = cp.Client.List(ctx, &l, client.InNamespace(f.NS))
		if len(l.Items) == 0 {
			return false
		}
		rs = l.Items[0]
		return true
	}, fixture.Wait, fixture.Tick)
	f.Finish(t, f.EventuallyRun(t, &rs, 1, contract.OperationCreate), true, "nightly", "", "")
	f.Eventually(t, &rs, func(c *assert.CollectT) { assert.Equal(c, "nightly", rs.Status.Provider.ID) })
	return rc, &rs
}

func TestRunConfigurationRecordsItsLatestSucceededRun(t *testing.T) {
	f := fixture.Setup(t, cp)
	rc, rs := scheduledRunConfiguration(t, f)
	now := time.Now()
	scheduledRun(t, f.NewNamespace(t), "nightly-29433150", rs, rc, now.Add(time.Hour)) // not the provider's namespace
	scheduledRun(t, f.NS, "other-29433160", rs, rc, now.Add(time.Hour))                // not the CronJob's
	scheduledRun(t, f.NS, "nightly-29433120", rs, rc, now)
	f.Eventually(t, rc, func(c *assert.CollectT) {
		latest := rc.Status.LatestRuns.Succeeded
		if assert.NotNil(c, latest) {
			assert.Equal(c, "nightly-29433120", latest.ProviderID)
			assert.Equal(c, []pipelinesv1beta1.Artifact{{Name: "model", Location: "file:///kfp/artifacts/nightly-29433120/train/model"}}, latest.Artifacts)
		}
	})
	scheduledRun(t, f.NS, "nightly-29433000", rs, rc, now.Add(-time.Hour)) // an older run, seen late
	scheduledRun(t, f.NS, "nightly-29433180", rs, rc, now.Add(time.Hour))
	f.Eventually(t, rc, func(c *assert.CollectT) {
		assert.Equal(c, "nightly-29433180", rc.Status.LatestRuns.Succeeded.ProviderID)
	})
}

func TestScheduledRunsQueueTheirEventsInTheirRunConfiguration(t *testing.T) {
	f := fixture.SetupWithConfig(t, cp, fixture.Backoff, func(c *operator.Config) {
		c.EventSinks = []operator.EventSink{{Name: "audit", URL: "http://127.0.0.1:9/"}} // never reachable: events stay pending
	})
	rc, rs := scheduledRunConfiguration(t, f)
	now := time.Now()
	endedRun(t, f.NewNamespace(t), "nightly-29433150", rs, rc, now, corev1.ConditionTrue) // not the provider's namespace
	endedRun(t, f.NS, "nightly-29433120", rs, rc, now, corev1.ConditionTrue)
	endedRun(t, f.NS, "nightly-29433180", rs, rc, now.Add(time.Minute), corev1.ConditionFalse)
	f.Eventually(t, rc, func(c *assert.CollectT) {
		status := map[string]string{}
		for _, ev := range rc.Status.CompletionEvents.Pending {
			var data runcompletion.EventData
			assert.NoError(c, json.Unmarshal([]byte(ev.Data), &data))
			status[ev.ID] = string(data.Status)
			assert.Equal(c, f.NS+"/kfp", ev.Source)
			assert.Equal(c, f.NS+"/training", data.RunConfigurationName.String())
			assert.Nil(c, data.RunName, "a scheduled run has no Run")
		}
		assert.Equal(c, map[string]string{"nightly-29433120": "succeeded", "nightly-29433180": "failed"}, status,
			"each trusted run's event, failed ones too")
		assert.Equal(c, "nightly-29433120", rc.Status.LatestRuns.Succeeded.ProviderID)
	})
	// Marked as recorded, so no restart or resync queues them again.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, name := range []string{"nightly-29433120", "nightly-29433180"} {
			var pr tektonv1.PipelineRun
			assert.NoError(c, cp.Client.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &pr))
			assert.Equal(c, string(rc.UID), pr.Annotations[contract.AnnotationCompletionRecorded], name)
		}
	}, fixture.Wait, fixture.Tick)
}

func TestRetentionDeletesCompletedRunsAfterTheTTL(t *testing.T) {
	ns := (&fixture.Fixture{CP: cp}).NewNamespace(t)
	run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"}}
	require.NoError(t, cp.Client.Create(ctx, run))
	completed := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	run.Status.CompletionState, run.Status.MarkedCompletedAt = pipelinesv1beta1.CompletionStateSucceeded, &metav1.Time{Time: completed}
	require.NoError(t, cp.Client.Status().Update(ctx, run))

	now := completed.Add(30 * time.Minute)
	r := &completion.Retention{Client: cp.Client, TTL: time.Hour, Now: func() time.Time { return now }}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)}
	res, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, res.RequeueAfter, "looked at again when due")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(run), run), "kept before the TTL")

	now = completed.Add(time.Hour)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	// Deleted: gone, or (the finalizer webhook gave it the backend
	// finalizer, and no engine runs here to delete its backend run) being
	// deleted.
	err = cp.Client.Get(ctx, client.ObjectKeyFromObject(run), run)
	assert.True(t, apierrors.IsNotFound(err) || (err == nil && !run.DeletionTimestamp.IsZero()), "deleted after the TTL: %v", err)
}
