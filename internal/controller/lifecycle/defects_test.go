package lifecycle_test

// Regression tests for what trying the operator as a hostile user found.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// forgeStatus writes the status as a user with status access could.
func forgeStatus(t *testing.T, obj lifecycle.Subject, provider pipelinesv1beta1.ProviderAndID) {
	t.Helper()
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	obj.CommonStatus().Provider = provider
	require.NoError(t, cp.Client.Status().Update(ctx, obj))
}

func gone(obj client.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
	}
}

// A user in a namespace the Provider does not admit names another team's
// Provider and backend id in the status, then deletes: nothing runs as that
// team's service account.
func TestDeleteNeverActsOnAnIDOnlyTheStatusNames(t *testing.T) {
	f := fixture.Setup(t, cp)
	outsider := f.NewNamespace(t)
	p := fixture.NewPipeline(outsider, "intruder")
	p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.NS + "/kfp")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonNamespaceNotAllowed)(p))

	forgeStatus(t, p, pipelinesv1beta1.ProviderAndID{Name: f.NS + "/kfp", ID: "victims-pipeline"})
	require.NoError(t, cp.Client.Delete(ctx, p))
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonBackendRecordMissing)(p))
	assert.Contains(t, fixture.Condition(p, pipelinesv1beta1.ConditionReady).Message, `"victims-pipeline"`)
	assert.Empty(t, f.RunsOf(t, p), "no run in the provider's namespace")

	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) {
		p.Annotations = map[string]string{pipelinesv1beta1.AnnotationSkipBackendDeletion: "true"}
	})
	require.Eventually(t, gone(p), fixture.Wait, fixture.Tick, "the way out the condition names")
	assert.Empty(t, f.RunsOf(t, p))
}

// An admitted resource whose status is rewritten to another id deletes the
// id its own create recorded.
func TestDeleteActsOnTheRecordedID(t *testing.T) {
	f := fixture.Setup(t, cp)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "exp"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "d"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "exp-1", "", "")
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))

	forgeStatus(t, e, pipelinesv1beta1.ProviderAndID{Name: f.NS + "/kfp", ID: "someone-elses"})
	require.NoError(t, cp.Client.Delete(ctx, e))
	del := f.EventuallyRun(t, e, 2, contract.OperationDelete)
	var resource map[string]any
	require.NoError(t, json.Unmarshal([]byte(fixture.Params(del)[taskdef.ParamResource]), &resource))
	assert.Equal(t, "exp-1", resource["status"].(map[string]any)["provider"].(map[string]any)["id"])
	f.Finish(t, del, true, "", "", "")
	require.Eventually(t, gone(e), fixture.Wait, fixture.Tick)
}

// Runs pruned (as Tekton's pruner or `tkn pr delete --keep` would) must
// not stop retries: the next attempt gets a name no remaining run has.
func TestRetriesGoOnAfterRunsArePruned(t *testing.T) {
	// A backoff long enough to prune a run before the next attempt.
	f := fixture.SetupWithBackoff(t, cp, time.Second)
	p := fixture.NewPipeline(f.NS, "pruned")
	require.NoError(t, cp.Client.Create(ctx, p))
	first := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	f.Finish(t, first, true, "", "quota exceeded", "")
	second := f.EventuallyRun(t, p, 2, contract.OperationCreate)
	f.Finish(t, second, true, "", "quota exceeded", "")
	// Prune the older run while the backoff runs.
	require.NoError(t, cp.Client.Delete(ctx, first))

	var third *tektonv1.PipelineRun
	require.Eventually(t, func() bool {
		runs := f.RunsOf(t, p)
		if len(runs) == 2 && runs[1].Name != second.Name {
			third = &runs[1]
			return true
		}
		return false
	}, fixture.Wait, fixture.Tick, "a new attempt despite the pruned run")
	assert.NotEqual(t, first.Name, third.Name)
	f.Finish(t, third, true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

// A PipelineRun the API server refuses is reported in the condition in its
// words (here: the provider's namespace is being deleted).
func TestRefusedPipelineRunIsReported(t *testing.T) {
	f := fixture.Setup(t, cp)
	user := f.NewNamespace(t)
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) { p.Spec.AllowedNamespaces = []string{user} })
	require.Eventually(t, func() bool {
		_ = cp.Client.Get(ctx, client.ObjectKeyFromObject(f.Provider), f.Provider)
		return f.Provider.Status.ObservedGeneration == f.Provider.Generation
	}, fixture.Wait, fixture.Tick)
	// envtest runs no namespace controller: the namespace stays Terminating.
	require.NoError(t, cp.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.NS}}))

	p := fixture.NewPipeline(user, "refused")
	p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.NS + "/kfp")
	require.NoError(t, cp.Client.Create(ctx, p))
	f.Eventually(t, p, func(c *assert.CollectT) {
		cond := fixture.Condition(p, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Equal(c, pipelinesv1beta1.ReasonPipelineRunNotCreated, cond.Reason, cond.Message)
			assert.Contains(c, cond.Message, "being terminated")
		}
	})
}
