package lifecycle_test

import (
	"encoding/json"
	"strings"
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
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

func TestProviderReferences(t *testing.T) {
	f := fixture.Setup(t, cp)

	t.Run("missing provider", func(t *testing.T) {
		p := fixture.NewPipeline(f.NS, "orphan")
		p.Spec.Provider = "nope"
		require.NoError(t, cp.Client.Create(ctx, p))
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderNotFound)(p))
		assert.Empty(t, f.RunsOf(t, p))
	})

	t.Run("another namespace, not allowed, then allowed", func(t *testing.T) {
		other := f.NewNamespace(t)
		p := fixture.NewPipeline(other, "visitor")
		p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.NS + "/kfp")
		require.NoError(t, cp.Client.Create(ctx, p))
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonNamespaceNotAllowed)(p))
		assert.Contains(t, fixture.Condition(p, pipelinesv1beta1.ConditionReady).Message, "spec.allowedNamespaces")
		assert.Empty(t, f.RunsOf(t, p), "no PipelineRun for a refused reference")

		fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) { p.Spec.AllowedNamespaces = []string{other} })
		pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
		assert.Equal(t, other, pr.Labels[contract.LabelOwnerNamespace])
		assert.Empty(t, pr.OwnerReferences, "no owner reference across namespaces")
		f.Finish(t, pr, true, "pipeline-x", "", "")
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	})

	t.Run("a 253-character provider name", func(t *testing.T) {
		long := strings.Repeat("p", 242) + ".provider.x"
		long = long[:253]
		prv := f.Provider.DeepCopy()
		prv.ObjectMeta = metav1.ObjectMeta{Namespace: f.NS, Name: long}
		prv.Status = pipelinesv1beta1.ProviderStatus{}
		require.NoError(t, cp.Client.Create(ctx, prv))
		p := fixture.NewPipeline(f.NS, "long-provider")
		p.Spec.Provider = pipelinesv1beta1.ProviderReference(long)
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
		assert.LessOrEqual(t, len(pr.Labels[contract.LabelProvider]), 63, "the label is shortened")
		f.Finish(t, pr, true, "pipeline-long", "", "")
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
		assert.Equal(t, f.NS+"/"+long, p.Status.Provider.Name, "status names the provider whole")
	})

	t.Run("provider changed after sync", func(t *testing.T) {
		p := fixture.NewPipeline(f.NS, "mover")
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
		f.Finish(t, pr, true, "pipeline-m", "", "")
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
		fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Provider = "vai" })
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderChanged)(p))
		assert.Len(t, f.RunsOf(t, p), 1)
	})

	t.Run("framework the provider lacks", func(t *testing.T) {
		p := fixture.NewPipeline(f.NS, "wrong-framework")
		p.Spec.Framework.Name = "kfpsdk"
		require.NoError(t, cp.Client.Create(ctx, p))
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(p))
		assert.Contains(t, fixture.Condition(p, pipelinesv1beta1.ConditionReady).Message, `offers no framework "kfpsdk" (offers: tfx)`)
	})
}

func TestDeletionWhenTheProviderIsGone(t *testing.T) {
	f := fixture.Setup(t, cp)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "exp"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "d"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	pr := f.EventuallyRun(t, e, 1, contract.OperationCreate)
	assert.Equal(t, "kfp-experiment-create", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	f.Finish(t, pr, true, "exp-1", "", "")
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))

	// A Provider in use waits for its users; an administrator can still
	// force it out by removing its finalizer, as here.
	require.NoError(t, cp.Client.Delete(ctx, f.Provider))
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) { p.Finalizers = nil })
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(f.Provider), &pipelinesv1beta1.Provider{}))
	}, fixture.Wait, fixture.Tick)
	require.NoError(t, cp.Client.Delete(ctx, e))
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderNotFound)(e))
	assert.Contains(t, fixture.Condition(e, pipelinesv1beta1.ConditionReady).Message, pipelinesv1beta1.AnnotationSkipBackendDeletion+"=true")

	fixture.Update(t, f, e, func(e *pipelinesv1beta1.Experiment) {
		e.Annotations = map[string]string{pipelinesv1beta1.AnnotationSkipBackendDeletion: "true"}
	})
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(e), &pipelinesv1beta1.Experiment{}))
	}, fixture.Wait, fixture.Tick, "the documented way out")
}

// skip-backend-deletion lets a resource go even while its create is
// pending (a run that may never end), cancelling that run.
func TestSkipBackendDeletionReleasesAPendingResource(t *testing.T) {
	f := fixture.Setup(t, cp)
	p := fixture.NewPipeline(f.NS, "stuck")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	fixture.Update(t, f, p, func(p *pipelinesv1beta1.Pipeline) {
		p.Annotations = map[string]string{pipelinesv1beta1.AnnotationSkipBackendDeletion: "true"}
	})
	require.NoError(t, cp.Client.Delete(ctx, p))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Pipeline{}))
	}, fixture.Wait, fixture.Tick, "released without waiting for the pending run")
	got := &tektonv1.PipelineRun{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), got); err == nil {
		assert.EqualValues(t, tektonv1.PipelineRunSpecStatusCancelled, got.Spec.Status, "the pending run is cancelled")
	}
}

func TestArtifactRepositoryResolution(t *testing.T) {
	f := fixture.Setup(t, cp)
	location := func(t *testing.T, p *pipelinesv1beta1.Pipeline) (contract.ArtifactLocation, string) {
		t.Helper()
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
		var cfg struct{ ArtifactRepository contract.ArtifactLocation }
		require.NoError(t, json.Unmarshal([]byte(fixture.Params(pr)[taskdef.ParamProviderConfig]), &cfg))
		var compile struct{ PipelineRoot string }
		require.NoError(t, json.Unmarshal([]byte(fixture.Params(pr)[taskdef.ParamPipelineConfig]), &compile))
		assert.Equal(t, cfg.ArtifactRepository.Location, compile.PipelineRoot)
		all, err := json.Marshal(pr.Spec.Params)
		require.NoError(t, err)
		return cfg.ArtifactRepository, string(all)
	}

	got, _ := location(t, fixture.NewPipeline(f.NS, "root-storage"))
	assert.Equal(t, "pipelineRootStorage", got.Source)
	assert.Equal(t, "gs://root/pipelines", got.Location)

	require.NoError(t, cp.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "minio"},
		StringData: map[string]string{"accesskey": "SECRET-VALUE"}}))
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) {
		p.Spec.ArtifactRepository = &pipelinesv1beta1.ArtifactRepository{S3: &pipelinesv1beta1.S3ArtifactRepository{
			Bucket: "provider-bucket", KeyPrefix: "/runs/", Endpoint: "minio:9000",
			AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "minio"}, Key: "accesskey"}}}
	})
	require.Eventually(t, func() bool {
		_ = cp.Client.Get(ctx, client.ObjectKeyFromObject(f.Provider), f.Provider)
		return f.Provider.Status.ObservedGeneration == f.Provider.Generation
	}, fixture.Wait, fixture.Tick)
	got, all := location(t, fixture.NewPipeline(f.NS, "provider-repo"))
	assert.Equal(t, "provider", got.Source)
	assert.Equal(t, "s3://provider-bucket/runs", got.Location)
	assert.Equal(t, []contract.SecretKeyRef{{Purpose: "accessKey", Name: "minio", Key: "accesskey"}}, got.Secrets)
	assert.NotContains(t, all, "SECRET-VALUE", "credentials are referenced, never copied")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "artifact-repositories",
		Annotations: map[string]string{pipelinesv1beta1.AnnotationDefaultArtifactRepository: "team"}},
		Data: map[string]string{
			"team":   "s3:\n  bucket: team-bucket\n  keyFormat: \"artifacts/{{workflow.name}}\"\n  archiveLogs: true\n",
			"other":  "gcs:\n  bucket: other-bucket\n  keyPrefix: x\n",
			"broken": "s3: [not, a, map]\n",
			"empty":  "archiveLogs: true\n",
		}}
	require.NoError(t, cp.Client.Create(ctx, cm))
	time.Sleep(200 * time.Millisecond) // past the operator's ConfigMap TTL (100 ms here)
	got, _ = location(t, fixture.NewPipeline(f.NS, "namespace-default"))
	assert.Equal(t, "namespace", got.Source)
	assert.Equal(t, "s3://team-bucket/artifacts", got.Location)

	explicit := fixture.NewPipeline(f.NS, "explicit")
	explicit.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: "other"}
	got, _ = location(t, explicit)
	assert.Equal(t, "resource", got.Source)
	assert.Equal(t, "gs://other-bucket/x", got.Location)

	for key, want := range map[string]string{
		"broken":  `key "broken" is not valid YAML`,
		"empty":   `key "empty": no supported repository`,
		"missing": `has no key "missing"`,
	} {
		bad := fixture.NewPipeline(f.NS, "bad-"+key)
		bad.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: key}
		require.NoError(t, cp.Client.Create(ctx, bad))
		f.Eventually(t, bad, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonArtifactRepoInvalid)(bad))
		assert.Contains(t, fixture.Condition(bad, pipelinesv1beta1.ConditionReady).Message, want)
		assert.Empty(t, f.RunsOf(t, bad))
	}
}

// Deleting a namespace deletes a resource and the PipelineRuns recording
// its backend id at once; no delete operation can be created there any
// more. The resource must still go, or the namespace never does. (This API
// server has no namespace controller: the test deletes what it would.)
func TestAResourceGoesWithItsNamespace(t *testing.T) {
	f := fixture.Setup(t, cp)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "exp"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "d"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	f.Finish(t, f.EventuallyRun(t, e, 1, contract.OperationCreate), true, "exp-1", "", "")
	f.Eventually(t, e, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))

	require.NoError(t, cp.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.NS}}))
	require.NoError(t, cp.Client.DeleteAllOf(ctx, &tektonv1.PipelineRun{}, client.InNamespace(f.NS)))
	require.NoError(t, cp.Client.Delete(ctx, e))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(e), &pipelinesv1beta1.Experiment{}))
	}, fixture.Wait, fixture.Tick, "released although its record is gone: its namespace is going")
}
