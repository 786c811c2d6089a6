package v1alpha6_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	webhookconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// examples are kfp-operator's v1alpha6 example manifests (testdata).
func examples(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "kfp-operator", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = data
	}
	return out
}

// decodeV1alpha6 reads a manifest strictly, as kubectl's strict field
// validation would.
func decodeV1alpha6(t *testing.T, data []byte) metav1.Object {
	t.Helper()
	var tm metav1.TypeMeta
	require.NoError(t, yaml.Unmarshal(data, &tm))
	require.Equal(t, v1alpha6.GroupVersion.String(), tm.APIVersion)
	obj := map[string]func() metav1.Object{
		"Pipeline":         func() metav1.Object { return &v1alpha6.Pipeline{} },
		"RunConfiguration": func() metav1.Object { return &v1alpha6.RunConfiguration{} },
		"RunSchedule":      func() metav1.Object { return &v1alpha6.RunSchedule{} },
		"Run":              func() metav1.Object { return &v1alpha6.Run{} },
		"Experiment":       func() metav1.Object { return &v1alpha6.Experiment{} },
		"Provider":         func() metav1.Object { return &v1alpha6.Provider{} },
	}[tm.Kind]()
	require.NoError(t, yaml.UnmarshalStrict(data, obj))
	return obj
}

func kindOf(t *testing.T, obj metav1.Object) kindCase {
	t.Helper()
	name := reflect.TypeOf(obj).Elem().Name()
	for _, k := range kinds {
		if k.kind == name {
			return k
		}
	}
	t.Fatalf("no kind for %T", obj)
	return kindCase{}
}

// specOf is the object's spec as JSON-shaped data.
func specOf(t *testing.T, obj any) any {
	t.Helper()
	return normalised(t, obj).(map[string]any)["spec"]
}

// body is the object as JSON-shaped data without apiVersion and kind.
func body(t *testing.T, obj any) any {
	t.Helper()
	m := normalised(t, obj).(map[string]any)
	delete(m, "apiVersion")
	delete(m, "kind")
	return m
}

func fromYAML(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(s), &v))
	return prune(v)
}

// TestExampleManifests converts each of kfp-operator's v1alpha6 examples
// to v1beta1 as kfp-operator's own v1alpha6-to-v1beta1 mapping (and its
// migration guide, docs-gen/content/docs/reference/resources/migration/v1beta1.md)
// says, and back to what the manifest said.
func TestExampleManifests(t *testing.T) {
	want := map[string]struct {
		spec      string // the v1beta1 spec
		remainder string // the v1alpha6 remainder annotation on the v1beta1 object
	}{
		"ref-v0.6.0-pipeline.yaml": {
			spec: `{provider: kfp, image: "kfp-quickstart:v1", env: [{name: TRAINING_RUNS, value: "100"}],
				framework: {name: tfx, parameters: {components: base_pipeline.create_components}}}`,
			remainder: `{"env":[{"name":"TRAINING_RUNS","value":100}]}`,
		},
		"ref-v0.6.0-runconfiguration.yaml": {spec: `{
			run: {provider: kfp, pipeline: "penguin-pipeline:v1-abcdef", experimentName: penguin-experiment,
				parameters: [{name: TRAINING_RUNS, value: "100"}],
				artifacts: [{name: serving-model, path: "Pusher:pushed_model:0[pushed == 1]"}]},
			triggers: {schedules: [{cronExpression: "0 * * * *", startTime: "2024-01-01T00:00:00Z", endTime: "2024-12-31T23:59:59Z"}],
				onChange: [pipeline], runConfigurations: [dependency-rc]}}`},
		"ref-v0.6.0-experiment.yaml": {spec: `{provider: kfp, description: An experiment for the penguin pipeline}`},
		"ref-v0.6.0-provider-kfp.yaml": {spec: `{image: "kfp-operator-kfp-provider:0.6.0", defaultBeamArgs: [{name: project, value: my-project}],
			executionMode: v1, pipelineRootStorage: "gs://my-storage", serviceAccount: kfp-operator-kfp,
			parameters: {grpcKfpApiAddress: "ml-pipeline.kubeflow:8887", grpcMetadataStoreAddress: "metadata-grpc-service.kubeflow:8080",
				kfpNamespace: kubeflow, restKfpApiUrl: "http://ml-pipeline.kubeflow:8888"}}`},
		"ref-v0.6.0-provider-vai.yaml": {spec: `{image: "kfp-operator-vai-provider:0.6.0", defaultBeamArgs: [{name: project, value: my-project}],
			executionMode: v2, pipelineRootStorage: "gs://my-storage", serviceAccount: kfp-operator-vai,
			parameters: {eventsourcePipelineEventsSubscription: kfp-operator-vai-run-events-eventsource, maxConcurrentRunCount: 1,
				pipelineBucket: pipeline-storage-bucket, vaiJobServiceAccount: kfp-operator-vai@my-project.iam.gserviceaccount.com,
				vaiLocation: europe-west2, vaiProject: my-project}}`},
		"ref-v0.6.0-run.yaml": {spec: `{provider: "", pipeline: "penguin-pipeline:v1-abcdef", experimentName: penguin-experiment,
			parameters: [{name: TRAINING_RUNS, value: "100"},
				{name: EXAMPLES, valueFrom: {runConfigurationRef: {name: penguin-pipeline-example-generator-runconfiguration, outputArtifact: examples}}}],
			artifacts: [{name: serving-model, path: "Pusher:pushed_model:0[pushed == 1]"}]}`},
		"archive-v0.6.0-quickstart-pipeline.yaml": {spec: `{provider: "", image: "kfp-quickstart:v1",
			framework: {name: tfx, parameters: {components: pipeline.create_components}}}`},
		"archive-v0.6.0-quickstart-experiment.yaml": {spec: `{provider: "", description: An experiment for the penguin pipeline}`},
		"archive-v0.6.0-dependent-pipeline_training.yaml": {spec: `{provider: "", image: "kfp-dependent-training:v1",
			framework: {name: tfx, parameters: {components: pipeline.create_components}}}`},
		"archive-v0.6.0-dependent-runconfiguration_training.yaml": {spec: `{
			run: {provider: "", pipeline: penguin-pipeline-training, parameters: [{name: examples_location,
				valueFrom: {runConfigurationRef: {name: penguin-pipeline-examples-rc, outputArtifact: examples}}}]},
			triggers: {runConfigurations: [penguin-pipeline-examples-rc]}}`},
		"versions-v0.6.0-dependent-pipeline_examples.yaml": {spec: `{provider: "", image: "kfp-dependent-examples:v1",
			framework: {name: tfx, parameters: {components: pipeline.create_components}}}`},
		"versions-v0.6.0-dependent-runconfiguration_training.yaml": {
			spec: `{run: {provider: "", pipeline: penguin-pipeline-training, parameters: [{name: examples_location,
				valueFrom: {runConfigurationRef: {name: penguin-pipeline-examples-rc, outputArtifact: examples}}}]},
				triggers: {runConfigurations: [penguin-pipeline-examples-rc]}}`,
			remainder: `{"parameters":[{"name":"examples_location","valueFrom":{"runConfigurationRef":{"name":"penguin-pipeline-examples-rc","outputArtifact":"examples"}}}]}`,
		},
		"versions-v0.6.0-quickstart-runconfiguration.yaml": {spec: `{
			run: {provider: "", pipeline: penguin-pipeline, experimentName: penguin-experiment,
				parameters: [{name: push_destination, value: '{"filesystem":{"base_directory":"gs://my-bucket/penguin-pipeline"}}'}]},
			triggers: {schedules: [{cronExpression: "0 * * * *", startTime: "2024-01-01T00:00:00Z", endTime: "2024-12-31T23:59:59Z"}]}}`},
		"migration-v1alpha6-pipeline.yaml": {spec: `{provider: vai, image: registry/mypipelineimage,
			framework: {name: tfx, parameters: {components: pipeline.create_components, beamArgs: [{name: anArg, value: aValue}]}}}`},
		"migration-v1alpha6-runconfiguration.yaml": {spec: `{run: {provider: vai, pipeline: my-training-pipeline,
			parameters: [{name: TRAINING_RUNS, value: "100"}]}, triggers: {schedules: [{cronExpression: "0 * * * *"}]}}`},
		"migration-v1alpha6-experiment.yaml": {spec: `{provider: vai, description: An experiment}`},
		"migration-v1alpha6-run.yaml": {spec: `{provider: vai, pipeline: penguin-pipeline, experimentName: penguin-experiment,
			parameters: [{name: TRAINING_RUNS, value: "100"},
				{name: EXAMPLES, valueFrom: {runConfigurationRef: {name: base-namespace/penguin-pipeline-example-generator-runconfiguration, outputArtifact: examples}}}],
			artifacts: [{name: serving-model, path: "Pusher:pushed_model:0[pushed == 1]"}]}`},
		"migration-v1alpha6-runschedule.yaml": {spec: `{provider: vai, pipeline: penguin-pipeline, experimentName: penguin-experiment,
			parameters: [{name: TRAINING_RUNS, value: "100"},
				{name: EXAMPLES, valueFrom: {runConfigurationRef: {name: base-namespace/penguin-pipeline-example-generator-runconfiguration, outputArtifact: examples}}}],
			artifacts: [{name: serving-model, path: "Pusher:pushed_model:0[pushed == 1]"}],
			schedule: {cronExpression: "0 * * * *"}}`},
		"migration-v1alpha6-provider.yaml": {
			spec: `{serviceImage: "kfp-operator-kfp-provider-service:0.7.0", defaultBeamArgs: [{name: project, value: my-project}],
				executionMode: v2, pipelineRootStorage: "gs://my-storage", serviceAccount: kfp-operator-vai,
				parameters: {eventsourcePipelineEventsSubscription: kfp-operator-vai-run-events-eventsource, maxConcurrentRunCount: 1,
					pipelineBucket: pipeline-storage-bucket, vaiJobServiceAccount: kfp-operator-vai@my-project.iam.gserviceaccount.com,
					vaiLocation: europe-west2, vaiProject: my-project}}`,
			remainder: `{"images":{"image":"kfp-operator-vai-provider:0.7.0","serviceImage":"kfp-operator-kfp-provider-service:0.7.0"}}`,
		},
	}
	for file, data := range examples(t) {
		t.Run(file, func(t *testing.T) {
			w, ok := want[file]
			require.True(t, ok, "no expectation for %s", file)
			orig := decodeV1alpha6(t, data)
			k := kindOf(t, orig)
			hub, err := k.to(orig, v1alpha6.Defaults{})
			require.NoError(t, err)
			if diff := cmp.Diff(fromYAML(t, w.spec), specOf(t, hub)); diff != "" {
				t.Errorf("v1beta1 spec (-want +got):\n%s", diff)
			}
			assert.Equal(t, w.remainder, hub.GetAnnotations()[v1alpha6.AnnotationV1alpha6Remainder])
			back, err := k.from(hub, v1alpha6.Defaults{})
			require.NoError(t, err)
			if diff := cmp.Diff(normalised(t, orig), normalised(t, back)); diff != "" {
				t.Errorf("back in v1alpha6 (-want +got):\n%s", diff)
			}
		})
	}
}

func annotations(t *testing.T, obj metav1.Object, key string) map[string]any {
	t.Helper()
	raw, ok := obj.GetAnnotations()[key]
	if !ok {
		return nil
	}
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &v))
	return v
}

// TestProviderReferences: v1alpha6 names a provider; v1beta1 references it
// as NAME or NAMESPACE/NAME. The namespace travels as kfp-operator's
// providerNamespace (providerStatusNamespace for the status).
func TestProviderReferences(t *testing.T) {
	central := v1alpha6.Defaults{ProviderNamespace: "kfp-system"}
	cases := []struct {
		name      string
		d         v1alpha6.Defaults
		hub       v1beta1.ProviderReference
		alpha     string
		remainder map[string]any // on the v1alpha6 object
	}{
		{"same namespace", v1alpha6.Defaults{}, "kfp", "kfp", nil},
		{"another namespace", v1alpha6.Defaults{}, "team-a/kfp", "kfp", map[string]any{"providerNamespace": "team-a"}},
		{"the default namespace", central, "kfp-system/kfp", "kfp", nil},
		{"another namespace than the default", central, "team-a/kfp", "kfp", map[string]any{"providerNamespace": "team-a"}},
		{"own namespace with a default", central, "kfp", "kfp", map[string]any{"provider": "kfp"}},
		{"none", central, "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hub := &v1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "team-b"}, Spec: v1beta1.ExperimentSpec{Provider: c.hub}}
			alpha, err := v1alpha6.ExperimentFromHub(hub, c.d)
			require.NoError(t, err)
			assert.Equal(t, c.alpha, alpha.Spec.Provider)
			assert.Equal(t, c.remainder, annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder))
			back, err := v1alpha6.ExperimentToHub(alpha, c.d)
			require.NoError(t, err)
			assert.Equal(t, c.hub, back.Spec.Provider)
			assert.Empty(t, back.Annotations)
		})
	}

	t.Run("a bare v1alpha6 name refers to the default namespace", func(t *testing.T) {
		hub, err := v1alpha6.PipelineToHub(&v1alpha6.Pipeline{Spec: v1alpha6.PipelineSpec{Provider: "kfp"}}, central)
		require.NoError(t, err)
		assert.Equal(t, v1beta1.ProviderReference("kfp-system/kfp"), hub.Spec.Provider)
		assert.Empty(t, hub.Annotations)
	})

	t.Run("a manifest exported from kfp-operator keeps its provider's namespace", func(t *testing.T) {
		alpha := &v1alpha6.Run{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: map[string]string{
				v1alpha6.AnnotationV1beta1Remainder: `{"providerNamespace":"kfp-operator","providerStatusNamespace":"kfp-operator"}`,
				"team":                              "ml",
			}},
			Spec:   v1alpha6.RunSpec{Provider: "vai", Pipeline: "penguin"},
			Status: v1alpha6.RunStatus{Status: v1alpha6.Status{Provider: v1alpha6.ProviderAndID{Name: "vai", ID: "run-1"}}},
		}
		hub, err := v1alpha6.RunToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1beta1.ProviderReference("kfp-operator/vai"), hub.Spec.Provider)
		assert.Equal(t, v1beta1.ProviderAndID{Name: "kfp-operator/vai", ID: "run-1"}, hub.Status.Provider)
		assert.Equal(t, map[string]string{"team": "ml"}, hub.Annotations)
	})

	t.Run("a provider renamed through v1alpha6 keeps the recorded namespace", func(t *testing.T) {
		alpha := &v1alpha6.Pipeline{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha6.AnnotationV1beta1Remainder: `{"providerNamespace":"team-a"}`}},
			Spec:       v1alpha6.PipelineSpec{Provider: "other"},
		}
		hub, err := v1alpha6.PipelineToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1beta1.ProviderReference("team-a/other"), hub.Spec.Provider)
	})

	t.Run("a namespace written into a v1alpha6 provider passes through", func(t *testing.T) {
		alpha := &v1alpha6.Pipeline{Spec: v1alpha6.PipelineSpec{Provider: "team-a/kfp"}}
		hub, err := v1alpha6.PipelineToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1beta1.ProviderReference("team-a/kfp"), hub.Spec.Provider)
		assert.Equal(t, map[string]any{"provider": "team-a/kfp"}, annotations(t, hub, v1alpha6.AnnotationV1alpha6Remainder))
		back, err := v1alpha6.PipelineFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, "team-a/kfp", back.Spec.Provider)
		assert.Empty(t, back.Annotations)
	})
}

func rawJSON(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// TestFrameworks: v1alpha6 knows tfx only, as tfxComponents and beamArgs;
// another framework, or other parameters, wait in the remainder (as
// kfp-operator records a framework other than tfx).
func TestFrameworks(t *testing.T) {
	t.Run("tfx with components and beam args needs no record", func(t *testing.T) {
		hub := &v1beta1.Pipeline{Spec: v1beta1.PipelineSpec{Image: "img:1", Framework: v1beta1.PipelineFramework{
			Name: "tfx", Parameters: map[string]apiextensionsv1.JSON{
				"components": rawJSON(`"pipeline.create_components"`),
				"beamArgs":   rawJSON(`[{"name":"project","value":"p"}]`),
			}}}}
		alpha, err := v1alpha6.PipelineFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, "pipeline.create_components", alpha.Spec.TfxComponents)
		assert.Equal(t, []v1alpha6.NamedValue{{Name: "project", Value: ptr.To(intstr.FromString("p"))}}, alpha.Spec.BeamArgs)
		assert.Empty(t, alpha.Annotations)
	})
	t.Run("another framework is recorded", func(t *testing.T) {
		fw := v1beta1.PipelineFramework{Name: "kfpsdk", Parameters: map[string]apiextensionsv1.JSON{
			"components": rawJSON(`"pipeline.build"`), "compilerFlags": rawJSON(`{"x":1}`),
		}}
		hub := &v1beta1.Pipeline{Spec: v1beta1.PipelineSpec{Image: "img:1", Framework: fw,
			ArtifactRepositoryRef: &v1beta1.ArtifactRepositoryRef{ConfigMap: "repos", Key: "s3"}}}
		alpha, err := v1alpha6.PipelineFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, "pipeline.build", alpha.Spec.TfxComponents, "v1alpha6 still shows the components")
		assert.Equal(t, map[string]any{
			"framework":             map[string]any{"name": "kfpsdk", "parameters": map[string]any{"components": "pipeline.build", "compilerFlags": map[string]any{"x": float64(1)}}},
			"artifactRepositoryRef": map[string]any{"configMap": "repos", "key": "s3"},
		}, annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder))
		back, err := v1alpha6.PipelineToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, body(t, hub), body(t, back))

		// tfxComponents changed through v1alpha6: the recorded framework no
		// longer agrees, and the edit wins.
		alpha.Spec.TfxComponents = "pipeline.other"
		edited, err := v1alpha6.PipelineToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, "tfx", edited.Spec.Framework.Name)
		assert.Equal(t, `"pipeline.other"`, string(edited.Spec.Framework.Parameters["components"].Raw))
		assert.Equal(t, hub.Spec.ArtifactRepositoryRef, edited.Spec.ArtifactRepositoryRef)
	})
}

// TestValuesAndPaths: numbers become text and artifact paths gain their
// index in v1beta1; v1alpha6's spelling is recorded, and loses to an edit.
func TestValuesAndPaths(t *testing.T) {
	alpha := &v1alpha6.RunSchedule{Spec: v1alpha6.RunScheduleSpec{RunSpec: v1alpha6.RunSpec{
		Provider: "kfp", Pipeline: "penguin",
		RuntimeParameters: []v1alpha6.RuntimeParameter{{Name: "epochs", Value: ptr.To(intstr.FromInt32(3))}},
		Artifacts:         []v1alpha6.OutputArtifact{{Name: "model", Path: "Pusher:pushed_model[pushed == 1]"}, {Name: "examples", Path: "Gen:examples"}},
	}, Schedule: v1alpha6.Schedule{CronExpression: "0 * * * *"}}}
	hub, err := v1alpha6.RunScheduleToHub(alpha, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Equal(t, []v1beta1.RuntimeParameter{{Name: "epochs", Value: "3"}}, hub.Spec.Parameters)
	assert.Equal(t, []v1beta1.OutputArtifact{{Name: "model", Path: "Pusher:pushed_model:0[pushed == 1]"}, {Name: "examples", Path: "Gen:examples:0"}}, hub.Spec.Artifacts)
	assert.Equal(t, map[string]any{
		"runtimeParameters": []any{map[string]any{"name": "epochs", "value": float64(3)}},
		"artifacts": []any{map[string]any{"name": "model", "path": "Pusher:pushed_model[pushed == 1]"},
			map[string]any{"name": "examples", "path": "Gen:examples"}},
	}, annotations(t, hub, v1alpha6.AnnotationV1alpha6Remainder))

	back, err := v1alpha6.RunScheduleFromHub(hub, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Equal(t, body(t, alpha), body(t, back))

	// Edited through v1beta1: the record is stale and v1beta1's values win.
	hub.Spec.Parameters[0].Value = "5"
	edited, err := v1alpha6.RunScheduleFromHub(hub, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Equal(t, []v1alpha6.RuntimeParameter{{Name: "epochs", Value: ptr.To(intstr.FromString("5"))}}, edited.Spec.RuntimeParameters)
	assert.Equal(t, alpha.Spec.Artifacts, edited.Spec.Artifacts, "the artifacts' record still agrees")

	// v1beta1's optional flag has no home in v1alpha6.
	hub.Spec.Parameters = []v1beta1.RuntimeParameter{{Name: "examples", ValueFrom: &v1beta1.ValueFrom{
		RunConfigurationRef: v1beta1.RunConfigurationRef{Name: "rc", OutputArtifact: "examples", Optional: true}}}}
	withOptional, err := v1alpha6.RunScheduleFromHub(hub, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Contains(t, withOptional.Annotations[v1alpha6.AnnotationV1beta1Remainder], `"optional":true`)
	again, err := v1alpha6.RunScheduleToHub(withOptional, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.True(t, again.Spec.Parameters[0].ValueFrom.RunConfigurationRef.Optional)
}

func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.Unix(1700000000, 0).Rfc3339Copy()}
}

// TestStatus: synchronizationState is the Synchronized condition's reason;
// the status fields either version lacks are recorded.
func TestStatus(t *testing.T) {
	t.Run("synchronizationState", func(t *testing.T) {
		hub := &v1beta1.Pipeline{Spec: v1beta1.PipelineSpec{Framework: v1beta1.PipelineFramework{Name: "tfx"}}, Status: v1beta1.Status{
			Provider: v1beta1.ProviderAndID{Name: "team-a/kfp", ID: "pipeline-1"},
			Version:  "v1-abc", ObservedGeneration: 2,
			Conditions: []metav1.Condition{condition("Ready", "Synchronized"), condition("Synchronized", "Succeeded")},
		}}
		alpha, err := v1alpha6.PipelineFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1alpha6.Status{
			Provider: v1alpha6.ProviderAndID{Name: "kfp", ID: "pipeline-1"}, SynchronizationState: "Succeeded",
			Version: "v1-abc", ObservedGeneration: 2, Conditions: hub.Status.Conditions,
		}, alpha.Status)
		assert.Equal(t, map[string]any{"providerStatusNamespace": "team-a"}, annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder))

		// A state the conditions do not say is recorded, and given back
		// only while the condition's reason has not changed.
		alpha.Status.SynchronizationState = "Updating"
		withState, err := v1alpha6.PipelineToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"synchronizationState": map[string]any{"state": "Updating", "reason": "Succeeded"}},
			annotations(t, withState, v1alpha6.AnnotationV1alpha6Remainder))
		stillUpdating, err := v1alpha6.PipelineFromHub(withState, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1alpha6.SynchronizationState("Updating"), stillUpdating.Status.SynchronizationState)
		withState.Status.Conditions[1].Reason = "Failed"
		failed, err := v1alpha6.PipelineFromHub(withState, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1alpha6.SynchronizationState("Failed"), failed.Status.SynchronizationState)
	})

	t.Run("RunConfiguration", func(t *testing.T) {
		done := metav1.Unix(1700000000, 0).Rfc3339Copy()
		hub := &v1beta1.RunConfiguration{Status: v1beta1.RunConfigurationStatus{
			Status: v1beta1.Status{Provider: v1beta1.ProviderAndID{Name: "kfp"}, ObservedGeneration: 3,
				Conditions: []metav1.Condition{condition("Synchronized", "Succeeded")}},
			TriggeredPipelineVersion: "v1-abc", TriggeredRunSpecVersion: "123",
			LatestRuns: v1beta1.LatestRuns{Succeeded: &v1beta1.RunReference{ProviderID: "run-9",
				Artifacts: []v1beta1.Artifact{{Name: "model", Location: "gs://b/m"}}, CompletedAt: &done, Seal: "c2VhbA"}},
			Triggers: v1beta1.TriggersStatus{RunConfigurations: map[string]v1beta1.TriggeredBy{"up": {ProviderID: "run-8"}}},
		}}
		alpha, err := v1alpha6.RunConfigurationFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1alpha6.RunConfigurationStatus{
			SynchronizationState: "Succeeded", Provider: "kfp", TriggeredPipelineVersion: "v1-abc",
			LatestRuns: v1alpha6.LatestRuns{Succeeded: v1alpha6.RunReference{ProviderID: "run-9",
				Artifacts: []v1alpha6.Artifact{{Name: "model", Location: "gs://b/m"}}}},
			Triggers: v1alpha6.TriggersStatus{RunConfigurations: map[string]v1alpha6.TriggeredRunReference{"up": {ProviderID: "run-8"}},
				RunSpec: v1alpha6.RunSpecTriggerStatus{Version: "123"}},
			ObservedGeneration: 3, Conditions: hub.Status.Conditions,
		}, alpha.Status)
		rem := annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder)
		assert.Equal(t, "c2VhbA", rem["latestRuns"].(map[string]any)["succeeded"].(map[string]any)["seal"])
		back, err := v1alpha6.RunConfigurationToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, body(t, hub), body(t, back))
	})

	t.Run("Run", func(t *testing.T) {
		hub := &v1beta1.Run{Status: v1beta1.RunStatus{
			Status:          v1beta1.Status{Conditions: []metav1.Condition{condition("Synchronized", "Succeeded")}},
			CompletionState: v1beta1.CompletionStateFailed, CompletionMessage: "task train failed",
			ObservedPipelineVersion: "v1-abc",
		}}
		alpha, err := v1alpha6.RunFromHub(hub, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, v1alpha6.CompletionState("Failed"), alpha.Status.CompletionState)
		assert.Equal(t, map[string]any{"completionMessage": "task train failed"}, annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder))
		back, err := v1alpha6.RunToHub(alpha, v1alpha6.Defaults{})
		require.NoError(t, err)
		assert.Equal(t, body(t, hub), body(t, back))
	})
}

// TestProvider: a v1alpha6 Provider with a service image is a v1beta1
// provider service; its CLI image is recorded, as kfp-operator does.
func TestProvider(t *testing.T) {
	hub := &v1beta1.Provider{Spec: v1beta1.ProviderSpec{
		ServiceImage: "svc:1", ServiceAccount: "kfp", AllowedNamespaces: []string{"team-b"},
		Frameworks: []v1beta1.Framework{{Name: "tfx", Image: "tfx-compiler:1"}},
	}, Status: v1beta1.ProviderStatus{ObservedGeneration: 1, ServiceURL: "http://svc", Conditions: []metav1.Condition{condition("Synchronized", "Succeeded")}}}
	alpha, err := v1alpha6.ProviderFromHub(hub, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Equal(t, v1alpha6.ProviderSpec{ServiceImage: "svc:1", ServiceAccount: "kfp"}, alpha.Spec)
	assert.Equal(t, v1alpha6.SynchronizationState("Succeeded"), alpha.Status.SynchronizationState)
	rem := annotations(t, alpha, v1alpha6.AnnotationV1beta1Remainder)
	assert.Equal(t, []any{"team-b"}, rem["providerSpec"].(map[string]any)["allowedNamespaces"])
	assert.Equal(t, "http://svc", rem["providerStatus"].(map[string]any)["serviceURL"])
	back, err := v1alpha6.ProviderToHub(alpha, v1alpha6.Defaults{})
	require.NoError(t, err)
	assert.Equal(t, body(t, hub), body(t, back))
}

// TestConvertible: the v1alpha6 kinds convert through the v1beta1 hub, as
// controller-runtime's conversion webhook requires, and ConvertTo and
// ConvertFrom keep the destination's kind and version.
func TestConvertible(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(scheme))
	require.NoError(t, v1alpha6.AddToScheme(scheme))
	hubs := []conversion.Hub{&v1beta1.Pipeline{}, &v1beta1.RunConfiguration{}, &v1beta1.RunSchedule{}, &v1beta1.Run{}, &v1beta1.Experiment{}, &v1beta1.Provider{}}
	spokes := []conversion.Convertible{&v1alpha6.Pipeline{}, &v1alpha6.RunConfiguration{}, &v1alpha6.RunSchedule{}, &v1alpha6.Run{}, &v1alpha6.Experiment{}, &v1alpha6.Provider{}}
	for i, hub := range hubs {
		ok, err := webhookconversion.IsConvertible(scheme, hub)
		require.NoError(t, err)
		assert.True(t, ok, "%T", hub)

		spoke := spokes[i]
		require.NoError(t, spoke.ConvertTo(hub))
		assert.Equal(t, v1beta1.GroupVersion.String(), hub.GetObjectKind().GroupVersionKind().GroupVersion().String())
		assert.Equal(t, reflect.TypeOf(hub).Elem().Name(), hub.GetObjectKind().GroupVersionKind().Kind)
		require.NoError(t, spoke.ConvertFrom(hub))
		assert.Equal(t, v1alpha6.GroupVersion.String(), spoke.GetObjectKind().GroupVersionKind().GroupVersion().String())
	}
}
