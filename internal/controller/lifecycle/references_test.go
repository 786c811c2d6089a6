package lifecycle_test

import (
	"encoding/json"
	"fmt"
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
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

func TestProviderReferences(t *testing.T) {
	f := setup(t)

	t.Run("missing provider", func(t *testing.T) {
		p := newPipeline(f.ns, "orphan")
		p.Spec.Provider = "nope"
		require.NoError(t, cp.Client.Create(ctx, p))
		eventually(t, p, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderNotFound)(p))
		assert.Empty(t, runsOf(t, f.ns, p))
	})

	t.Run("another namespace, not allowed, then allowed", func(t *testing.T) {
		other := newNamespace(t)
		p := newPipeline(other, "visitor")
		p.Spec.Provider = pipelinesv1beta1.ProviderReference(f.ns + "/kfp")
		require.NoError(t, cp.Client.Create(ctx, p))
		eventually(t, p, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonNamespaceNotAllowed)(p))
		assert.Contains(t, condition(p, pipelinesv1beta1.ConditionReady).Message, "spec.allowedNamespaces")
		assert.Empty(t, runsOf(t, f.ns, p), "no PipelineRun for a refused reference")

		require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(f.provider), f.provider))
		f.provider.Spec.AllowedNamespaces = []string{other}
		require.NoError(t, cp.Client.Update(ctx, f.provider))
		pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
		assert.Equal(t, other, pr.Labels[lifecycle.LabelOwnerNamespace])
		assert.Empty(t, pr.OwnerReferences, "no owner reference across namespaces")
		finish(t, pr, true, "pipeline-x", "", "")
		eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	})

	t.Run("a 253-character provider name", func(t *testing.T) {
		long := strings.Repeat("p", 242) + ".provider.x"
		long = long[:253]
		prv := f.provider.DeepCopy()
		prv.ObjectMeta = metav1.ObjectMeta{Namespace: f.ns, Name: long}
		prv.Status = pipelinesv1beta1.ProviderStatus{}
		require.NoError(t, cp.Client.Create(ctx, prv))
		p := newPipeline(f.ns, "long-provider")
		p.Spec.Provider = pipelinesv1beta1.ProviderReference(long)
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
		assert.LessOrEqual(t, len(pr.Labels[lifecycle.LabelProvider]), 63, "the label is shortened")
		finish(t, pr, true, "pipeline-long", "", "")
		eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
		assert.Equal(t, f.ns+"/"+long, p.Status.Provider.Name, "status names the provider whole")
	})

	t.Run("provider changed after sync", func(t *testing.T) {
		p := newPipeline(f.ns, "mover")
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
		finish(t, pr, true, "pipeline-m", "", "")
		eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
		p.Spec.Provider = "vai"
		require.NoError(t, cp.Client.Update(ctx, p))
		eventually(t, p, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderChanged)(p))
		assert.Len(t, runsOf(t, f.ns, p), 1)
	})

	t.Run("framework the provider lacks", func(t *testing.T) {
		p := newPipeline(f.ns, "wrong-framework")
		p.Spec.Framework.Name = "kfpsdk"
		require.NoError(t, cp.Client.Create(ctx, p))
		eventually(t, p, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(p))
		assert.Contains(t, condition(p, pipelinesv1beta1.ConditionReady).Message, `offers no framework "kfpsdk" (offers: tfx)`)
	})
}

func TestDeletionWhenTheProviderIsGone(t *testing.T) {
	f := setup(t)
	e := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "exp"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "d"}}
	require.NoError(t, cp.Client.Create(ctx, e))
	pr := eventuallyRun(t, f.ns, e, 1, lifecycle.OpCreate)
	assert.Equal(t, "kfp-experiment-create", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	finish(t, pr, true, "exp-1", "", "")
	eventually(t, e, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(e))

	require.NoError(t, cp.Client.Delete(ctx, f.provider))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(f.provider), &pipelinesv1beta1.Provider{}))
	}, wait, tick)
	require.NoError(t, cp.Client.Delete(ctx, e))
	eventually(t, e, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderNotFound)(e))
	assert.Contains(t, condition(e, pipelinesv1beta1.ConditionReady).Message, lifecycle.AnnotationSkipBackendDeletion+"=true")

	e.Annotations = map[string]string{lifecycle.AnnotationSkipBackendDeletion: "true"}
	require.NoError(t, cp.Client.Update(ctx, e))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(e), &pipelinesv1beta1.Experiment{}))
	}, wait, tick, "the documented way out")
}

// skip-backend-deletion lets a resource go even while its create is
// pending (a run that may never end), cancelling that run.
func TestSkipBackendDeletionReleasesAPendingResource(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "stuck")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
	update(t, p, func(p *pipelinesv1beta1.Pipeline) {
		p.Annotations = map[string]string{lifecycle.AnnotationSkipBackendDeletion: "true"}
	})
	require.NoError(t, cp.Client.Delete(ctx, p))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Pipeline{}))
	}, wait, tick, "released without waiting for the pending run")
	got := &tektonv1.PipelineRun{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), got); err == nil {
		assert.EqualValues(t, tektonv1.PipelineRunSpecStatusCancelled, got.Spec.Status, "the pending run is cancelled")
	}
}

func TestRunIsCancelledWhenDeletedWhileRunning(t *testing.T) {
	f := setup(t)
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "run"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin:0.3.1-abc", Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}}}}
	require.NoError(t, cp.Client.Create(ctx, r))
	pr := eventuallyRun(t, f.ns, r, 1, lifecycle.OpCreate)
	assert.Equal(t, "kfp-run-create", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)

	require.NoError(t, cp.Client.Delete(ctx, r))
	require.Eventually(t, func() bool {
		got := &tektonv1.PipelineRun{}
		return cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), got) == nil && got.Spec.Status == tektonv1.PipelineRunSpecStatusCancelled
	}, wait, tick, "the running PipelineRun is cancelled")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), pr))
	finish(t, pr, false, "", "", "PipelineRun was cancelled")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(r), &pipelinesv1beta1.Run{}))
	}, wait, tick, "nothing reached the backend: nothing to delete")
}

// Sizes: the schema refuses a value or a total that cannot fit a step's
// environment; what passes it but would still not fit once JSON-escaped is
// refused by the operator with InvalidSpec and no PipelineRun, not retried
// as runs that could never start.
func TestOversizedValuesAreRefused(t *testing.T) {
	f := setup(t)
	run := func(name string, values ...string) *pipelinesv1beta1.Run {
		r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
			Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"}}
		for i, v := range values {
			r.Spec.Parameters = append(r.Spec.Parameters, pipelinesv1beta1.RuntimeParameter{Name: fmt.Sprintf("p%d", i), Value: v})
		}
		return r
	}
	err := cp.Client.Create(ctx, run("one-huge", strings.Repeat("x", 40000)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.parameters[0].value")
	err = cp.Client.Create(ctx, run("many-large", strings.Repeat("x", 30000), strings.Repeat("x", 30000), strings.Repeat("x", 30000)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may total at most 65536 bytes")

	escaped := run("escapes", strings.Repeat("<", 30000), strings.Repeat("&", 30000))
	require.NoError(t, cp.Client.Create(ctx, escaped), "60,000 bytes pass the schema")
	eventually(t, escaped, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(escaped))
	assert.Contains(t, condition(escaped, pipelinesv1beta1.ConditionReady).Message, "more than a step's environment variable can hold")
	assert.Empty(t, runsOf(t, f.ns, escaped), "no PipelineRun that could never start")
}

// A cron expression the schema lets through but no backend can run is
// refused by the parser: InvalidSpec naming the problem, no PipelineRun.
func TestRunScheduleWithAnUnparsableCronIsRefused(t *testing.T) {
	f := setup(t)
	for name, expr := range map[string]string{"out-of-range": "99 99 99 99 99", "zero-step": "*/0 * * * *", "too-often": "@every 10s"} {
		rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
			Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
				Schedule: pipelinesv1beta1.Schedule{CronExpression: expr}}}
		require.NoError(t, cp.Client.Create(ctx, rs), "the schema admits %q", expr)
		eventually(t, rs, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)(rs))
		assert.Contains(t, condition(rs, pipelinesv1beta1.ConditionReady).Message, "spec.schedule.cronExpression")
		assert.Empty(t, runsOf(t, f.ns, rs), "nothing reaches a backend")
	}
}

func TestRunScheduleCreateUpdate(t *testing.T) {
	f := setup(t)
	rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "nightly"},
		Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Schedule: pipelinesv1beta1.Schedule{CronExpression: "0 2 * * *"}}}
	require.NoError(t, cp.Client.Create(ctx, rs))
	create := eventuallyRun(t, f.ns, rs, 1, lifecycle.OpCreate)
	finish(t, create, true, "schedule-1", "", "")
	eventually(t, rs, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(rs))
	rs.Spec.Schedule.CronExpression = "0 3 * * *"
	require.NoError(t, cp.Client.Update(ctx, rs))
	update := eventuallyRun(t, f.ns, rs, 2, lifecycle.OpUpdate)
	var resource struct {
		Spec   pipelinesv1beta1.RunScheduleSpec
		Status struct {
			Provider pipelinesv1beta1.ProviderAndID
		}
	}
	require.NoError(t, json.Unmarshal([]byte(params(update)[taskdef.ParamResource]), &resource))
	assert.Equal(t, "0 3 * * *", resource.Spec.Schedule.CronExpression)
	assert.Equal(t, "schedule-1", resource.Status.Provider.ID, "the provider updates what it created")
}

func TestArtifactRepositoryResolution(t *testing.T) {
	f := setup(t)
	location := func(t *testing.T, p *pipelinesv1beta1.Pipeline) (contract.ArtifactLocation, string) {
		t.Helper()
		require.NoError(t, cp.Client.Create(ctx, p))
		pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
		var cfg struct{ ArtifactRepository contract.ArtifactLocation }
		require.NoError(t, json.Unmarshal([]byte(params(pr)[taskdef.ParamProviderConfig]), &cfg))
		var compile struct{ PipelineRoot string }
		require.NoError(t, json.Unmarshal([]byte(params(pr)[taskdef.ParamPipelineConfig]), &compile))
		assert.Equal(t, cfg.ArtifactRepository.Location, compile.PipelineRoot)
		all, err := json.Marshal(pr.Spec.Params)
		require.NoError(t, err)
		return cfg.ArtifactRepository, string(all)
	}

	got, _ := location(t, newPipeline(f.ns, "root-storage"))
	assert.Equal(t, "pipelineRootStorage", got.Source)
	assert.Equal(t, "gs://root/pipelines", got.Location)

	require.NoError(t, cp.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "minio"},
		StringData: map[string]string{"accesskey": "SECRET-VALUE"}}))
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(f.provider), f.provider))
	f.provider.Spec.ArtifactRepository = &pipelinesv1beta1.ArtifactRepository{S3: &pipelinesv1beta1.S3ArtifactRepository{
		Bucket: "provider-bucket", KeyPrefix: "/runs/", Endpoint: "minio:9000",
		AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "minio"}, Key: "accesskey"}}}
	require.NoError(t, cp.Client.Update(ctx, f.provider))
	require.Eventually(t, func() bool {
		_ = cp.Client.Get(ctx, client.ObjectKeyFromObject(f.provider), f.provider)
		return f.provider.Status.ObservedGeneration == f.provider.Generation
	}, wait, tick)
	got, all := location(t, newPipeline(f.ns, "provider-repo"))
	assert.Equal(t, "provider", got.Source)
	assert.Equal(t, "s3://provider-bucket/runs", got.Location)
	assert.Equal(t, []contract.SecretKeyRef{{Purpose: "accessKey", Name: "minio", Key: "accesskey"}}, got.Secrets)
	assert.NotContains(t, all, "SECRET-VALUE", "credentials are referenced, never copied")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "artifact-repositories",
		Annotations: map[string]string{lifecycle.AnnotationDefaultArtifactRepo: "team"}},
		Data: map[string]string{
			"team":   "s3:\n  bucket: team-bucket\n  keyFormat: \"artifacts/{{workflow.name}}\"\n  archiveLogs: true\n",
			"other":  "gcs:\n  bucket: other-bucket\n  keyPrefix: x\n",
			"broken": "s3: [not, a, map]\n",
			"empty":  "archiveLogs: true\n",
		}}
	require.NoError(t, cp.Client.Create(ctx, cm))
	time.Sleep(200 * time.Millisecond) // past the operator's ConfigMap TTL (100 ms here)
	got, _ = location(t, newPipeline(f.ns, "namespace-default"))
	assert.Equal(t, "namespace", got.Source)
	assert.Equal(t, "s3://team-bucket/artifacts", got.Location)

	explicit := newPipeline(f.ns, "explicit")
	explicit.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: "other"}
	got, _ = location(t, explicit)
	assert.Equal(t, "resource", got.Source)
	assert.Equal(t, "gs://other-bucket/x", got.Location)

	for key, want := range map[string]string{
		"broken":  `key "broken" is not valid YAML`,
		"empty":   `key "empty": no supported repository`,
		"missing": `has no key "missing"`,
	} {
		bad := newPipeline(f.ns, "bad-"+key)
		bad.Spec.ArtifactRepositoryRef = &pipelinesv1beta1.ArtifactRepositoryRef{Key: key}
		require.NoError(t, cp.Client.Create(ctx, bad))
		eventually(t, bad, readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonArtifactRepoInvalid)(bad))
		assert.Contains(t, condition(bad, pipelinesv1beta1.ConditionReady).Message, want)
		assert.Empty(t, runsOf(t, f.ns, bad))
	}
}
