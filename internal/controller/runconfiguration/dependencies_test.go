package runconfiguration_test

// RunConfiguration dependencies with the whole operator: an upstream
// RunConfiguration's new latest succeeded run starts exactly one Run of
// each RunConfiguration it triggers (across an operator restart), and a
// Run's valueFrom parameter waits for, then resolves to, the upstream
// artifact's location.

import (
	"time"

	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// succeeded records run id with one artifact as rc's latest succeeded run,
// as the completion controller does.
func succeeded(t *testing.T, rc *pipelinesv1beta1.RunConfiguration, id, location string) {
	t.Helper()
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(rc), rc))
	patch := client.MergeFrom(rc.DeepCopy())
	now := metav1.Now()
	rc.Status.LatestRuns.Succeeded = &pipelinesv1beta1.RunReference{ProviderID: id, CompletedAt: &now,
		Artifacts: []pipelinesv1beta1.Artifact{{Name: "examples", Location: location}}}
	cp.SealKey(t).SealLatest(rc, rc.Status.LatestRuns.Succeeded)
	require.NoError(t, cp.Client.Status().Patch(ctx, rc, patch))
}

func syncedPipeline(t *testing.T, f *fixture.Fixture) {
	p := fixture.NewPipeline(f.NS, "penguin")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 1, contract.OperationCreate), true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

// examples creates the upstream RunConfiguration "examples".
func examples(t *testing.T, f *fixture.Fixture) *pipelinesv1beta1.RunConfiguration {
	t.Helper()
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "examples"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"}}}
	require.NoError(t, cp.Client.Create(ctx, rc))
	return rc
}

func TestUpstreamSuccessTriggersOneRunEach(t *testing.T) {
	f := fixture.Setup(t, cp)
	syncedPipeline(t, f)
	upstream := examples(t, f)
	training := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "training"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{
			Run:      pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Triggers: pipelinesv1beta1.Triggers{RunConfigurations: []string{"examples"}},
		}}
	require.NoError(t, cp.Client.Create(ctx, training))
	f.Eventually(t, training, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(training))
	assert.Empty(t, ownedRuns(t, training, pipelinesv1beta1.TriggerLabelRunConfiguration), "no upstream run yet")

	// A latest run the operator did not record (a status write) fires nothing.
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(upstream), upstream))
	forged := client.MergeFrom(upstream.DeepCopy())
	upstream.Status.LatestRuns.Succeeded = &pipelinesv1beta1.RunReference{ProviderID: "forged",
		Artifacts: []pipelinesv1beta1.Artifact{{Name: "examples", Location: "s3://attacker/x"}}, Seal: "v1.forged"}
	require.NoError(t, cp.Client.Status().Patch(ctx, upstream, forged))
	fixture.Update(t, f, training, func(rc *pipelinesv1beta1.RunConfiguration) { rc.Labels = map[string]string{"woken": "1"} })
	time.Sleep(2 * time.Second)
	f.Eventually(t, training, func(c *assert.CollectT) { assert.Equal(c, training.Generation, training.Status.ObservedGeneration) })
	assert.Empty(t, ownedRuns(t, training, pipelinesv1beta1.TriggerLabelRunConfiguration), "a forged latest run fired a Run")
	assert.Empty(t, training.Status.Triggers.RunConfigurations, "a forged latest run is recorded as fired")

	succeeded(t, upstream, "run-1", "file:///a/run-1")
	f.Eventually(t, training, func(c *assert.CollectT) {
		assert.Equal(c, "run-1", training.Status.Triggers.RunConfigurations["examples"].ProviderID)
	})
	require.Len(t, ownedRuns(t, training, pipelinesv1beta1.TriggerLabelRunConfiguration), 1)

	// The operator stops; the upstream run changes; exactly one more Run after the restart.
	f.StopOperator()
	succeeded(t, upstream, "run-2", "file:///a/run-2")
	f.StartOperator(t)
	f.Eventually(t, training, func(c *assert.CollectT) {
		assert.Equal(c, "run-2", training.Status.Triggers.RunConfigurations["examples"].ProviderID)
	})
	runs := ownedRuns(t, training, pipelinesv1beta1.TriggerLabelRunConfiguration)
	assert.Len(t, runs, 2, "one Run per upstream run")

	for i := range runs {
		create := f.EventuallyRun(t, &runs[i], 1, contract.OperationCreate)
		assert.Equal(t, &contract.TriggerIndicator{Type: "runConfiguration", Source: "examples", SourceNamespace: f.NS}, triggerOf(t, create),
			"kfp-operator's indicator: the upstream RunConfiguration")
		f.Finish(t, create, true, "run-of-"+runs[i].Name, "", "")
	}
	// Woken again with nothing new: no third.
	fixture.Update(t, f, training, func(rc *pipelinesv1beta1.RunConfiguration) {
		rc.Spec.Run.Parameters = []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}}
	})
	f.Eventually(t, training, func(c *assert.CollectT) { assert.Equal(c, training.Generation, training.Status.ObservedGeneration) })
	assert.Len(t, ownedRuns(t, training, pipelinesv1beta1.TriggerLabelRunConfiguration), 2)
}

func TestValueFromWaitsForThenResolvesTheUpstreamArtifact(t *testing.T) {
	f := fixture.Setup(t, cp)
	syncedPipeline(t, f)
	upstream := examples(t, f)
	run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "train"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin", Parameters: []pipelinesv1beta1.RuntimeParameter{
			{Name: "epochs", Value: "3"},
			{Name: "data", ValueFrom: &pipelinesv1beta1.ValueFrom{RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: "examples", OutputArtifact: "examples"}}},
			{Name: "extra", ValueFrom: &pipelinesv1beta1.ValueFrom{RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: "absent", OutputArtifact: "x", Optional: true}}},
		}}}
	require.NoError(t, cp.Client.Create(ctx, run))
	f.Eventually(t, run, fixture.ReadyMessageContains(run, "waiting for upstream artifacts", "RunConfiguration examples has no succeeded run yet"))
	assert.Empty(t, f.RunsOf(t, run), "nothing started while a required artifact is missing")

	succeeded(t, upstream, "run-9", "file:///kfp/artifacts/run-9/generate/examples")
	pr := f.EventuallyRun(t, run, 1, contract.OperationCreate)
	data, err := contract.DecodeParam(fixture.Params(pr)[taskdef.ParamResource])
	require.NoError(t, err)
	var res contract.Resource
	require.NoError(t, json.Unmarshal(data, &res))
	require.NotNil(t, res.Parameters, "present: the spec uses valueFrom")
	assert.Equal(t, []contract.Parameter{{Name: "epochs", Value: "3"}, {Name: "data", Value: "file:///kfp/artifacts/run-9/generate/examples"}},
		*res.Parameters, "resolved; the optional one left out")
	f.Eventually(t, run, func(c *assert.CollectT) {
		assert.Equal(c, "run-9", run.Status.Dependencies.RunConfigurations["examples"].ProviderID)
	})

	// Without valueFrom the values are only in the spec: the resource is not twice their size.
	plain := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "plain"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin", Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "epochs", Value: "3"}}}}
	require.NoError(t, cp.Client.Create(ctx, plain))
	data, err = contract.DecodeParam(fixture.Params(f.EventuallyRun(t, plain, 1, contract.OperationCreate))[taskdef.ParamResource])
	require.NoError(t, err)
	var plainRes contract.Resource
	require.NoError(t, json.Unmarshal(data, &plainRes))
	assert.Nil(t, plainRes.Parameters)
}

func TestTriggerCyclesAreRefused(t *testing.T) {
	f := fixture.Setup(t, cp)
	syncedPipeline(t, f)
	rc := func(name, triggeredBy string) *pipelinesv1beta1.RunConfiguration {
		return &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
			Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
				Triggers: pipelinesv1beta1.Triggers{RunConfigurations: []string{triggeredBy}}}}
	}
	a, b := rc("a", "b"), rc("b", "a")
	require.NoError(t, cp.Client.Create(ctx, a))
	require.NoError(t, cp.Client.Create(ctx, b))
	succeeded(t, a, "run-1", "file:///x")
	f.Eventually(t, b, fixture.ReadyMessageContains(b, "form a cycle (b ← a ← b"))
	f.Eventually(t, a, fixture.ReadyMessageContains(a, "form a cycle (a ← b ← a"))
	assert.Empty(t, ownedRuns(t, b, pipelinesv1beta1.TriggerLabelRunConfiguration), "nothing fired")
}
