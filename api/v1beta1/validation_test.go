package v1beta1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "api-test-"}}
	require.NoError(t, cp.Client.Create(context.Background(), ns))
	return ns.Name
}

func sample(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", file))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &u.Object))
	return u
}

func TestEverySampleIsAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	require.NoError(t, err)
	kinds := map[string]bool{}
	ns := newNamespace(t)
	for _, f := range files {
		obj := sample(t, filepath.Base(f))
		obj.SetNamespace(ns)
		require.NoError(t, cp.Client.Create(context.Background(), obj), "sample %s", f)
		kinds[obj.GetKind()] = true
	}
	for _, kind := range []string{"Provider", "Pipeline", "RunConfiguration", "RunSchedule", "Run", "Experiment"} {
		assert.True(t, kinds[kind], "config/samples has no %s", kind)
	}
}

// set replaces the field at a dotted path (no list indices; set whole lists).
func set(path string, value any) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, value, strings.Split(path, ".")...); err != nil {
			panic(err)
		}
	}
}

func remove(path string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, strings.Split(path, ".")...)
	}
}

func TestInvalidObjectsAreRefusedNamingTheField(t *testing.T) {
	bothValueAndValueFrom := []any{map[string]any{
		"name": "a", "value": "1",
		"valueFrom": map[string]any{"runConfigurationRef": map[string]any{"name": "rc", "outputArtifact": "m"}},
	}}
	cases := []struct {
		name    string
		sample  string
		mutate  func(*unstructured.Unstructured)
		wantErr []string // every substring must appear in the error
	}{
		{"provider without image", "provider.yaml", remove("spec.image"), []string{"spec.image", "Required value"}},
		{"provider without service account", "provider.yaml", remove("spec.serviceAccount"), []string{"spec.serviceAccount", "Required value"}},
		{"provider with unknown execution mode", "provider.yaml", set("spec.executionMode", "v3"), []string{"spec.executionMode", "Unsupported value"}},
		{"provider with invalid allowed namespace", "provider.yaml", set("spec.allowedNamespaces", []any{"Team_A"}), []string{"spec.allowedNamespaces[0]"}},
		{"provider with duplicate frameworks", "provider.yaml", set("spec.frameworks", []any{
			map[string]any{"name": "tfx", "image": "a"}, map[string]any{"name": "tfx", "image": "b"},
		}), []string{"spec.frameworks[1]", "Duplicate value"}},
		{"provider with two artifact backends", "provider.yaml", set("spec.artifactRepository.gcs", map[string]any{"bucket": "bucket"}),
			[]string{"spec.artifactRepository", "exactly one of s3 or gcs"}},
		{"pipeline with malformed provider reference", "pipeline.yaml", set("spec.provider", "a/b/c"), []string{"spec.provider", "should match"}},
		{"pipeline with upper-case provider", "pipeline.yaml", set("spec.provider", "Team-A/kfp"), []string{"spec.provider"}},
		{"pipeline without framework", "pipeline.yaml", remove("spec.framework"), []string{"spec.framework", "Required value"}},
		{"pipeline with duplicate env", "pipeline.yaml", set("spec.env", []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"},
		}), []string{"spec.env[1]", "Duplicate value"}},
		{"run with malformed pipeline reference", "run.yaml", set("spec.pipeline", "penguin:1:2"), []string{"spec.pipeline", "should match"}},
		{"run with value and valueFrom", "run.yaml", set("spec.parameters", bothValueAndValueFrom),
			[]string{"spec.parameters[0]", "exactly one of value or valueFrom"}},
		{"run with neither value nor valueFrom", "run.yaml", set("spec.parameters", []any{map[string]any{"name": "a"}}),
			[]string{"spec.parameters[0]", "exactly one of value or valueFrom"}},
		{"run with duplicate parameters", "run.yaml", set("spec.parameters", []any{
			map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "a", "value": "2"},
		}), []string{"spec.parameters[1]", "Duplicate value"}},
		{"run without provider", "run.yaml", remove("spec.provider"), []string{"spec.provider", "Required value"}},
		{"run schedule with malformed cron", "runschedule.yaml", set("spec.schedule.cronExpression", "every night"),
			[]string{"spec.schedule.cronExpression", "should match"}},
		{"run schedule every second", "runschedule.yaml", set("spec.schedule.cronExpression", "@every"),
			[]string{"spec.schedule.cronExpression", "should match"}},
		{"run schedule with seven cron fields", "runschedule.yaml", set("spec.schedule.cronExpression", "0 0 2 * * * *"),
			[]string{"spec.schedule.cronExpression"}},
		{"run schedule ending before it starts", "runschedule.yaml", set("spec.schedule.endTime", "2025-01-01T00:00:00Z"),
			[]string{"spec.schedule", "startTime must be before endTime"}},
		{"run configuration with duplicate schedules", "runconfiguration.yaml", set("spec.triggers.schedules", []any{
			map[string]any{"cronExpression": "0 2 * * *"}, map[string]any{"cronExpression": "0 2 * * *"},
		}), []string{"spec.triggers.schedules", "must not contain duplicates"}},
		{"run configuration with unknown onChange", "runconfiguration.yaml", set("spec.triggers.onChange", []any{"image"}),
			[]string{"spec.triggers.onChange[0]", "Unsupported value"}},
		{"run configuration without run", "runconfiguration.yaml", remove("spec.run"), []string{"spec.run", "Required value"}},
		{"experiment without provider", "experiment.yaml", remove("spec.provider"), []string{"spec.provider", "Required value"}},
		{"experiment with oversized description", "experiment.yaml", set("spec.description", strings.Repeat("x", 4097)),
			[]string{"spec.description", "Too long"}},
	}
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := sample(t, tc.sample)
			obj.SetNamespace(ns)
			tc.mutate(obj)
			err := cp.Client.Create(context.Background(), obj)
			require.Error(t, err, "the API server accepted an invalid object")
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestRunSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	run := sample(t, "run.yaml")
	run.SetNamespace(newNamespace(t))
	require.NoError(t, cp.Client.Create(ctx, run))

	changed := run.DeepCopy()
	set("spec.experimentName", "another")(changed)
	err := cp.Client.Update(ctx, changed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec is immutable")

	relabelled := run.DeepCopy()
	relabelled.SetLabels(map[string]string{"team": "a"})
	require.NoError(t, cp.Client.Update(ctx, relabelled), "metadata of a Run stays editable")

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(run.GroupVersionKind())
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(run), stored))
	assert.Equal(t, run.Object["spec"], stored.Object["spec"], "the refused update must not change the stored spec")
}
