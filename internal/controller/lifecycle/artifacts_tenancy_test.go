package lifecycle_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// Secrets resolve only in the namespace that owns the configuration: a
// resource using another namespace's Provider may not name Secrets in its
// own namespace's artifact repositories (they would resolve where the
// provider runs), while the Provider's own repository keeps its Secrets.
func TestArtifactRepositorySecretsAcrossNamespaces(t *testing.T) {
	f := fixture.Setup(t, cp)
	tenant, plain := f.NewNamespace(t), f.NewNamespace(t)
	withSecret := "s3:\n  bucket: tenant-bucket\n  endpoint: tenant.example:9000\n" +
		"  accessKeySecret: {name: minio, key: accesskey}\n  secretKeySecret: {name: minio, key: secretkey}\n"
	for _, ns := range []string{tenant, f.NS} {
		require.NoError(t, cp.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lifecycle.ArtifactRepositoriesConfigMap,
				Annotations: map[string]string{pipelinesv1beta1.AnnotationDefaultArtifactRepository: "creds"}},
			Data: map[string]string{"creds": withSecret, "open": "s3:\n  bucket: open-bucket\n  endpoint: tenant.example:9000\n"}}))
	}
	fixture.Update(t, f, f.Provider, func(p *pipelinesv1beta1.Provider) {
		p.Spec.AllowedNamespaces = []string{tenant, plain}
		p.Spec.ArtifactRepository = &pipelinesv1beta1.ArtifactRepository{S3: &pipelinesv1beta1.S3ArtifactRepository{
			Bucket: "provider-bucket", Endpoint: "minio:9000",
			AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "minio"}, Key: "accesskey"}}}
	})
	require.Eventually(t, func() bool {
		_ = cp.Client.Get(ctx, client.ObjectKeyFromObject(f.Provider), f.Provider)
		return f.Provider.Status.ObservedGeneration == f.Provider.Generation
	}, fixture.Wait, fixture.Tick)
	time.Sleep(200 * time.Millisecond) // past the operator's ConfigMap TTL (100 ms here)

	location := func(t *testing.T, p *pipelinesv1beta1.Pipeline) contract.ArtifactLocation {
		t.Helper()
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := f.EventuallyRun(t, p, 1, contract.OperationCreate)
		var cfg struct{ ArtifactRepository contract.ArtifactLocation }
		require.NoError(t, json.Unmarshal([]byte(fixture.Params(pr)[taskdef.ParamProviderConfig]), &cfg))
		return cfg.ArtifactRepository
	}
	visitor := func(ns, name string) *pipelinesv1beta1.Pipeline {
		p := fixture.NewPipeline(ns, name)
		p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.NS + "/kfp")
		return p
	}

	t.Run("tenant namespace default naming Secrets is refused", func(t *testing.T) {
		p := visitor(tenant, "namespace-creds")
		require.NoError(t, cp.Client.Create(ctx, p))
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonArtifactRepoInvalid)(p))
		f.Eventually(t, p, fixture.ReadyMessageContains(p, tenant+`/artifact-repositories key "creds"`, "Secrets [minio]",
			"execute in namespace "+f.NS, "without credentials", "spec.artifactRepository"))
		assert.Empty(t, f.RunsOf(t, p), "no PipelineRun for a refused location")
	})

	t.Run("tenant explicit ref naming Secrets is refused", func(t *testing.T) {
		p := visitor(tenant, "explicit-creds")
		p.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: "creds"}
		require.NoError(t, cp.Client.Create(ctx, p))
		f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonArtifactRepoInvalid)(p))
		f.Eventually(t, p, fixture.ReadyMessageContains(p, "spec.artifactRepositoryRef"))
		assert.Empty(t, f.RunsOf(t, p))
	})

	t.Run("tenant repository without Secrets proceeds", func(t *testing.T) {
		p := visitor(tenant, "explicit-open")
		p.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: "open"}
		got := location(t, p)
		assert.Equal(t, "resource", got.Source)
		assert.Equal(t, "s3://open-bucket", got.Location)
		assert.Empty(t, got.Secrets)
	})

	t.Run("the Provider's repository keeps its Secrets for another namespace", func(t *testing.T) {
		got := location(t, visitor(plain, "provider-creds"))
		assert.Equal(t, "provider", got.Source)
		assert.Equal(t, []contract.SecretKeyRef{{Purpose: "accessKey", Name: "minio", Key: "accesskey"}}, got.Secrets)
	})

	t.Run("the Provider's own namespace keeps its Secrets", func(t *testing.T) {
		got := location(t, fixture.NewPipeline(f.NS, "own-creds"))
		assert.Equal(t, "namespace", got.Source)
		assert.Equal(t, "s3://tenant-bucket", got.Location)
		assert.Len(t, got.Secrets, 2)
	})
}
