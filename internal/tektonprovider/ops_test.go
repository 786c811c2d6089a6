package tektonprovider

// The operations against a real kube-apiserver with Tekton's CRDs.

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

func backend(t *testing.T) *Backend {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tp-"}}
	require.NoError(t, cp.Client.Create(ctx, ns))
	return &Backend{Client: cp.Client, Namespace: ns.Name, Image: launcher}
}

func specJSON(t *testing.T, spec any) json.RawMessage {
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	return data
}

// uploaded stores the demo pipeline at version and returns its id.
func uploaded(t *testing.T, b *Backend, version string) string {
	t.Helper()
	res := pipelineResource()
	res.Version = version
	id, err := b.Do(ctx, Request{Kind: "pipeline", Operation: "create", Resource: res, Config: config(nil), Definition: demoIR(t)})
	require.NoError(t, err)
	return id
}

func runResource(t *testing.T, kind, name, uid, id string, spec any) contract.Resource {
	return contract.Resource{ContractVersion: contract.Version, Kind: kind, Version: "v1",
		Metadata: contract.Metadata{Name: name, Namespace: "team-a", UID: uid,
			Owner: &contract.Owner{Kind: "RunConfiguration", Name: "training", UID: "rc-1"}},
		Spec:     specJSON(t, spec),
		Pipeline: &contract.PipelineRef{Name: "demo", Version: "1.0", ID: id}}
}

func TestPipelineVersionsAndDelete(t *testing.T) {
	b := backend(t)
	id := uploaded(t, b, "1.0")
	assert.Equal(t, id, uploaded(t, b, "1.0"), "a retried create succeeds with the same id")
	res := pipelineResource()
	res.Version, res.Status.Provider.ID = "2.0", id
	got, err := b.Do(ctx, Request{Kind: "pipeline", Operation: "update", Resource: res, Config: config(nil), Definition: demoIR(t)})
	require.NoError(t, err)
	assert.Equal(t, id, got)
	var list tektonv1.PipelineList
	require.NoError(t, cp.Client.List(ctx, &list, client.InNamespace(b.Namespace)))
	assert.Len(t, list.Items, 2, "one Tekton Pipeline per version")

	_, err = b.Do(ctx, Request{Kind: "pipeline", Operation: "update", Resource: res, Config: config(nil), Definition: []byte("{}")})
	assert.ErrorContains(t, err, "compiling pipeline version 2.0")

	_, err = b.Do(ctx, Request{Kind: "pipeline", Operation: "delete", Resource: res, Config: config(nil)})
	require.NoError(t, err)
	require.NoError(t, cp.Client.List(ctx, &list, client.InNamespace(b.Namespace)))
	assert.Empty(t, list.Items)
	_, err = b.Do(ctx, Request{Kind: "pipeline", Operation: "delete", Resource: res, Config: config(nil)})
	assert.NoError(t, err, "deleting what is gone succeeds")
}

func TestRunCreateIsIdempotentAndDeleteCancels(t *testing.T) {
	b := backend(t)
	id := uploaded(t, b, "1.0")
	spec := pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo:1.0", ExperimentName: "exp",
		Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "rows", Value: "120"}}}
	res := runResource(t, "Run", "my-run", "run-uid-1", id, spec)
	req := Request{Kind: "run", Operation: "create", Resource: res, Config: config(map[string]string{ParamArtifactsClaim: `"artifacts"`})}
	name, err := b.Do(ctx, req)
	require.NoError(t, err)
	again, err := b.Do(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, name, again, "a retried create finds its PipelineRun")
	var list tektonv1.PipelineRunList
	require.NoError(t, cp.Client.List(ctx, &list, client.InNamespace(b.Namespace)))
	require.Len(t, list.Items, 1)
	pr := list.Items[0]
	assert.Equal(t, "run-uid-1", pr.Labels[contract.LabelRunUID])
	assert.Equal(t, "training", pr.Labels[contract.LabelRunConfiguration])
	assert.Equal(t, "Run team-a/my-run", pr.Annotations[contract.AnnotationResource])
	assert.Equal(t, "team-a/training", pr.Annotations[contract.AnnotationRunConfiguration])
	assert.Equal(t, "rc-1", pr.Labels[contract.LabelRunConfigurationUID])
	assert.Equal(t, "team-a", pr.Spec.Workspaces[0].SubPath, "the Run's namespace's directory of the claim")

	squatter := res
	squatter.Metadata.UID = "someone-else"
	squatter.Status.Provider.ID = name
	_, err = b.Do(ctx, Request{Kind: "run", Operation: "create", Resource: squatter, Config: req.Config})
	assert.ErrorContains(t, err, "not made for this Run")
	_, err = b.Do(ctx, Request{Kind: "run", Operation: "delete", Resource: squatter, Config: req.Config})
	assert.ErrorContains(t, err, "not deleting it")

	res.Status.Provider.ID = name
	_, err = b.Do(ctx, Request{Kind: "run", Operation: "delete", Resource: res, Config: req.Config})
	require.NoError(t, err)
	err = cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &pr)
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
	_, err = b.Do(ctx, Request{Kind: "run", Operation: "delete", Resource: res, Config: req.Config})
	assert.NoError(t, err, "deleting what is gone succeeds")
}

// TestNamespacesRunsMountTheirOwnDirectories: one backend serving two
// namespaces, the artifacts on one claim: each namespace's run mounts its
// own directory, and a Run cannot run another namespace's pipeline (whose
// artifact URIs name that namespace's directory).
func TestNamespacesRunsMountTheirOwnDirectories(t *testing.T) {
	b := backend(t)
	cfg := config(map[string]string{ParamArtifactsClaim: `"artifacts"`})
	ids := map[string]string{}
	for _, ns := range []string{"team-a", "team-b"} {
		res := pipelineResource()
		res.Metadata.Namespace, res.Version = ns, "1.0"
		id, err := b.Do(ctx, Request{Kind: "pipeline", Operation: "create", Resource: res, Config: cfg, Definition: demoIR(t)})
		require.NoError(t, err)
		ids[ns] = id
	}
	runOf := func(ns, pipelineNamespace string) (*tektonv1.PipelineRun, error) {
		res := runResource(t, "Run", "train", "uid-"+ns, ids[pipelineNamespace], pipelinesv1beta1.RunSpec{})
		res.Metadata.Namespace = ns
		name, err := b.Do(ctx, Request{Kind: "run", Operation: "create", Resource: res, Config: cfg})
		if err != nil {
			return nil, err
		}
		var pr tektonv1.PipelineRun
		require.NoError(t, cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &pr))
		return &pr, nil
	}
	for _, ns := range []string{"team-a", "team-b"} {
		pr, err := runOf(ns, ns)
		require.NoError(t, err)
		require.Len(t, pr.Spec.Workspaces, 1)
		assert.Equal(t, "artifacts", pr.Spec.Workspaces[0].PersistentVolumeClaim.ClaimName)
		assert.Equal(t, ns, pr.Spec.Workspaces[0].SubPath, "%s's run mounts %s's directory only", ns, ns)
	}
	_, err := runOf("team-b", "team-a")
	assert.ErrorContains(t, err, `a run of namespace "team-b" cannot run it`)
}

func TestRunOfAVersionNotUploaded(t *testing.T) {
	b := backend(t)
	res := runResource(t, "Run", "r", "u", "no-such-pipeline", pipelinesv1beta1.RunSpec{})
	_, err := b.Do(ctx, Request{Kind: "run", Operation: "create", Resource: res, Config: config(nil)})
	assert.ErrorContains(t, err, "is not in the backend")
}

func TestScheduleLifecycleAndTrigger(t *testing.T) {
	b := backend(t)
	id := uploaded(t, b, "1.0")
	spec := pipelinesv1beta1.RunScheduleSpec{
		RunSpec:  pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"},
		Schedule: pipelinesv1beta1.Schedule{CronExpression: "*/5 * * * *"}}
	res := runResource(t, "RunSchedule", "nightly", "rs-uid", id, spec)
	name, err := b.Do(ctx, Request{Kind: "runschedule", Operation: "create", Resource: res, Config: config(nil)})
	require.NoError(t, err)
	spec.Schedule.CronExpression = "0 3 * * *"
	res.Spec, res.Status.Provider.ID = specJSON(t, spec), name
	_, err = b.Do(ctx, Request{Kind: "runschedule", Operation: "update", Resource: res, Config: config(nil)})
	require.NoError(t, err)
	var cj batchv1.CronJob
	require.NoError(t, cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &cj))
	assert.Equal(t, "0 3 * * *", cj.Spec.Schedule)
	assert.Equal(t, "rs-uid", cj.Labels[contract.LabelRunScheduleUID])

	// The trigger, as the CronJob's Job runs it: twice for one time.
	data, err := contract.DecodeParam(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args[2])
	require.NoError(t, err)
	var template tektonv1.PipelineRun
	require.NoError(t, json.Unmarshal(data, &template))
	job := name + "-29433120"
	created, err := Trigger(ctx, cp.Client, &template, job, time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.True(t, created)
	created, err = Trigger(ctx, cp.Client, &template, job, time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.False(t, created, "a retried Job finds the run of its time")
	created, err = Trigger(ctx, cp.Client, &template, name+"-29433125", time.Now(), time.Time{})
	require.NoError(t, err)
	assert.False(t, created, "before the start time")
	var runs tektonv1.PipelineRunList
	require.NoError(t, cp.Client.List(ctx, &runs, client.InNamespace(b.Namespace), client.MatchingLabels{contract.LabelRunScheduleUID: "rs-uid"}))
	require.Len(t, runs.Items, 1)
	assert.Equal(t, job, runs.Items[0].Name)
	assert.Equal(t, "training", runs.Items[0].Labels[contract.LabelRunConfiguration])

	// A run of that name made for another schedule is not taken for its own.
	other := template.DeepCopy()
	other.Labels[contract.LabelRunScheduleUID] = "another-schedule"
	_, err = Trigger(ctx, cp.Client, other, job, time.Time{}, time.Time{})
	assert.ErrorContains(t, err, "not made for this schedule")

	// A bad parameter does not hold a delete; the delete takes the schedule's runs with it.
	bad := config(map[string]string{ParamArtifactsStorage: `"x"`})
	_, err = b.Do(ctx, Request{Kind: "runschedule", Operation: "delete", Resource: res, Config: bad})
	require.NoError(t, err)
	err = cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &cj)
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
	require.NoError(t, cp.Client.List(ctx, &runs, client.InNamespace(b.Namespace), client.MatchingLabels{contract.LabelRunScheduleUID: "rs-uid"}))
	assert.Empty(t, runs.Items, "the schedule's runs go with it")
}

func TestAnotherResourcesObjectsAreNotReplaced(t *testing.T) {
	b := backend(t)
	id := uploaded(t, b, "1.0")
	spec := pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"},
		Schedule: pipelinesv1beta1.Schedule{CronExpression: "@daily"}}
	res := runResource(t, "RunSchedule", "nightly", "rs-1", id, spec)
	// Someone else's CronJob already has the name.
	squatter := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: CronJobName(res)},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}}}
	require.NoError(t, cp.Client.Create(ctx, squatter))
	_, err := b.Do(ctx, Request{Kind: "runschedule", Operation: "create", Resource: res, Config: config(nil)})
	assert.ErrorContains(t, err, "was not made for this resource")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(squatter), squatter))
	assert.Equal(t, "x", squatter.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image, "left as it was")
}

func TestRunUsesResolvedParameters(t *testing.T) {
	b := backend(t)
	id := uploaded(t, b, "1.0")
	spec := pipelinesv1beta1.RunSpec{Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "rows", ValueFrom: &pipelinesv1beta1.ValueFrom{
		RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: "upstream", OutputArtifact: "count"}}}}}
	res := runResource(t, "RunSchedule", "downstream", "run-uid-2", id, pipelinesv1beta1.RunScheduleSpec{RunSpec: spec,
		Schedule: pipelinesv1beta1.Schedule{CronExpression: "@daily"}})
	_, err := b.Do(ctx, Request{Kind: "runschedule", Operation: "create", Resource: res, Config: config(nil)})
	assert.ErrorContains(t, err, "valueFrom was not resolved", "a schedule's parameters are not resolved")

	res = runResource(t, "Run", "downstream", "run-uid-2", id, spec)
	res.Parameters = &[]contract.Parameter{{Name: "rows", Value: "77"}}
	name, err := b.Do(ctx, Request{Kind: "run", Operation: "create", Resource: res, Config: config(nil)})
	require.NoError(t, err)
	var pr tektonv1.PipelineRun
	require.NoError(t, cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &pr))
	require.Len(t, pr.Spec.Params, 1)
	assert.Equal(t, "77", pr.Spec.Params[0].Value.StringVal)

	// Resolved to nothing (an optional one left out): no params, not the spec's valueFrom.
	res = runResource(t, "Run", "downstream-2", "run-uid-3", id, spec)
	res.Parameters = &[]contract.Parameter{}
	name, err = b.Do(ctx, Request{Kind: "run", Operation: "create", Resource: res, Config: config(nil)})
	require.NoError(t, err)
	require.NoError(t, cp.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &pr))
	assert.Empty(t, pr.Spec.Params)
}
