package pipeline_test

// The Pipeline kind, run with the whole operator against a real API server.

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

func TestPipelineLifecycle(t *testing.T) {
	f := fixture.Setup(t, cp)
	sa := &corev1.ServiceAccount{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: f.Provider.Spec.ServiceAccount}, sa))
	sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-credentials"}}
	require.NoError(t, cp.Client.Update(ctx, sa))
	p := fixture.NewPipeline(f.NS, "penguin")
	require.NoError(t, cp.Client.Create(ctx, p))

	pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	f.Eventually(t, p, func(c *assert.CollectT) {
		sync := fixture.Condition(p, pipelinesv1beta1.ConditionSynchronized)
		if assert.NotNil(c, sync) {
			assert.Equal(c, string(pipelinesv1beta1.StateCreating), sync.Reason)
		}
		fixture.ReadyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(p)(c)
	})

	// The run: deterministic name, provider SA, labels, Tekton-valid, inputs as the contract says.
	assert.Equal(t, "kfp-provider", pr.Spec.TaskRunTemplate.ServiceAccountName)
	if assert.NotNil(t, pr.Spec.Timeouts, "every operation has a timeout") {
		assert.Equal(t, fixture.OperationTimeout, pr.Spec.Timeouts.Pipeline.Duration)
	}
	assert.Equal(t, "pipeline", pr.Labels[contract.LabelOwnerKind])
	assert.Equal(t, f.NS, pr.Labels[contract.LabelOwnerNamespace])
	assert.Equal(t, "kfp", pr.Labels[contract.LabelProvider])
	assert.Equal(t, naming.LabelValue("pipeline", f.NS, "penguin"), pr.Labels[contract.LabelTektonPipeline])
	assert.True(t, strings.HasPrefix(pr.Name, "pipeline-penguin-create-"), pr.Name)
	assert.Equal(t, "kfp-pipeline-create", fixture.ProviderTask(pr).TaskRef.Name)
	// Tenant code compiles in a pod of its own, as an account with no token,
	// never pulling with the provider account's pull secrets (the Provider
	// names none for pipeline images); the definition travels in a claim
	// made for the run.
	assert.Equal(t, taskdef.CompileTaskName, pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	if assert.Len(t, pr.Spec.TaskRunSpecs, 1) {
		spec := pr.Spec.TaskRunSpecs[0]
		assert.Equal(t, taskdef.CompilePipelineTask, spec.PipelineTaskName)
		assert.Equal(t, taskdef.CompilerServiceAccount, spec.ServiceAccountName)
		if assert.NotNil(t, spec.PodTemplate) && assert.NotNil(t, spec.PodTemplate.AutomountServiceAccountToken) {
			assert.False(t, *spec.PodTemplate.AutomountServiceAccountToken)
			assert.Empty(t, spec.PodTemplate.ImagePullSecrets, "the provider account's registry-credentials are not lent to tenant images")
			if assert.NotNil(t, spec.PodTemplate.SecurityContext) && assert.NotNil(t, spec.PodTemplate.SecurityContext.FSGroup) {
				assert.Equal(t, taskdef.StepUser, *spec.PodTemplate.SecurityContext.FSGroup, "the seal step (not root) writes to the fresh volume")
			}
		}
	}
	if assert.Len(t, pr.Spec.Workspaces, 1) && assert.NotNil(t, pr.Spec.Workspaces[0].VolumeClaimTemplate) {
		claim := pr.Spec.Workspaces[0].VolumeClaimTemplate.Spec
		assert.Equal(t, taskdef.WorkspaceDefinition, pr.Spec.Workspaces[0].Name)
		assert.Equal(t, "64Mi", claim.Resources.Requests.Storage().String())
		assert.Nil(t, claim.StorageClassName, "the cluster's default class")
	}
	assert.Equal(t, "true", pr.Annotations["tekton.dev/auto-cleanup-pvc"])
	require.NoError(t, generator.Validate(ctx, pr))
	in := fixture.Params(pr)
	for _, p := range pr.Spec.Params {
		if p.Name == taskdef.ParamResource || p.Name == taskdef.ParamProviderConfig || p.Name == taskdef.ParamPipelineConfig {
			assert.True(t, strings.HasPrefix(p.Value.StringVal, contract.EncodedPrefix), "%s is encoded: no $ for Tekton or the kubelet to substitute", p.Name)
		}
	}
	assert.Equal(t, f.Provider.Status.Image, in[taskdef.ParamProviderImage])
	assert.Equal(t, f.Provider.Status.Frameworks[0].Image, in[taskdef.ParamCompilerImage])
	assert.Equal(t, "example.com/penguin:0.3.1", in[taskdef.ParamPipelineImage])
	var compile map[string]any
	require.NoError(t, json.Unmarshal([]byte(in[taskdef.ParamPipelineConfig]), &compile))
	assert.Equal(t, "gs://root/pipelines", compile["pipelineRoot"], "the Provider's pipelineRootStorage is the last resort")
	var resource map[string]any
	require.NoError(t, json.Unmarshal([]byte(in[taskdef.ParamResource]), &resource))
	assert.Equal(t, "Pipeline", resource["kind"])

	f.Finish(t, pr, true, "pipeline-42", "", "")
	f.Eventually(t, p, func(c *assert.CollectT) {
		fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p)(c)
		assert.Equal(c, "pipeline-42", p.Status.Provider.ID)
		assert.Equal(c, f.NS+"/kfp", p.Status.Provider.Name)
		assert.True(c, strings.HasPrefix(p.Status.Version, "0.3.1-"), p.Status.Version)
	})
	firstVersion := p.Status.Version

	// A reconcile with nothing new creates nothing.
	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Annotations = map[string]string{"poke": "1"} })
	require.Never(t, func() bool { return len(f.RunsOf(t, p)) > 1 }, time.Second, fixture.Tick, "no-op reconciles create nothing")

	// Update: a new version, an update operation.
	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = "20" })
	update := f.EventuallyRun(t, p, 2, contract.OperationUpdate)
	f.Finish(t, update, true, "pipeline-42", "", "")
	f.Eventually(t, p, func(c *assert.CollectT) {
		fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p)(c)
		assert.NotEqual(c, firstVersion, p.Status.Version)
	})

	// Delete: the backend delete runs before the finalizer goes.
	require.NoError(t, cp.Client.Delete(ctx, p))
	del := f.EventuallyRun(t, p, 3, contract.OperationDelete)
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p), "held by the finalizer")
	f.Finish(t, del, true, "pipeline-42", "", "")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Pipeline{}))
	}, fixture.Wait, fixture.Tick)
}

// A pipeline through create, update and delete, each operation a PipelineRun of
// its own shared Task that Tekton would accept.
func TestCreateUpdateDelete(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.CreateUpdateDelete(t, "pipeline", fixture.NewPipeline(f.NS, "k-pipeline"), func(o lifecycle.Subject) { o.(*pipelinesv1beta1.Pipeline).Spec.Image = "example.com/penguin:0.4.0" })
}
