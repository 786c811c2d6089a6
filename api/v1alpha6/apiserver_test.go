package v1alpha6_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

// These tests run a real kube-apiserver (envtest, KUBEBUILDER_ASSETS) with
// the generated CRDs and the operator's conversion handler.

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

// TestCRDsServeBothVersions: every kind serves v1alpha6 and v1beta1, and
// stores v1beta1.
func TestCRDsServeBothVersions(t *testing.T) {
	for _, plural := range []string{"pipelines", "runconfigurations", "runschedules", "runs", "experiments", "providers"} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "pipelines.kubeflow.org_"+plural+".yaml"))
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.Unmarshal(data, &crd))
		versions := map[string][2]bool{}
		for _, v := range crd.Spec.Versions {
			versions[v.Name] = [2]bool{v.Served, v.Storage}
		}
		assert.Equal(t, map[string][2]bool{"v1alpha6": {true, false}, "v1beta1": {true, true}}, versions, plural)
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "v1alpha6-"}}
	require.NoError(t, cp.Client.Create(context.Background(), ns))
	return ns.Name
}

func newOf(obj metav1.Object) client.Object {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}

// TestExamplesThroughTheAPIServer applies each of kfp-operator's v1alpha6
// examples as kubectl would (strict field validation), then reads it as
// v1beta1, converted as the pure mapping says, and as v1alpha6 again,
// unchanged.
func TestExamplesThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	for file, data := range examples(t) {
		t.Run(file, func(t *testing.T) {
			ns := namespace(t) // examples share names
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(data, &u.Object))
			u.SetNamespace(ns)
			require.NoError(t, cp.Client.Create(ctx, u, client.FieldValidation("Strict")), "the API server refused %s", file)

			want := decodeV1alpha6(t, data)
			k := kindOf(t, want)
			wantHub, err := k.to(want, v1alpha6.Defaults{})
			require.NoError(t, err)

			hub := newOf(wantHub)
			require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName()}, hub))
			if diff := cmp.Diff(specOf(t, wantHub), specOf(t, hub)); diff != "" {
				t.Errorf("read as v1beta1 (-want +got):\n%s", diff)
			}
			assert.Equal(t, wantHub.GetAnnotations()[v1alpha6.AnnotationV1alpha6Remainder], hub.GetAnnotations()[v1alpha6.AnnotationV1alpha6Remainder])

			alpha := newOf(want)
			require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: u.GetName()}, alpha))
			if diff := cmp.Diff(specOf(t, want), specOf(t, alpha)); diff != "" {
				t.Errorf("read back as v1alpha6 (-want +got):\n%s", diff)
			}
			assert.Empty(t, alpha.GetAnnotations())
		})
	}
}

// TestV1beta1ReadAsV1alpha6: what v1alpha6 cannot hold waits in the
// remainder annotation, and an update through v1alpha6 keeps it.
func TestV1beta1ReadAsV1alpha6(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	hub := &v1beta1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "sdk", Namespace: ns},
		Spec: v1beta1.PipelineSpec{Provider: "team-a/kfp", Image: "img:1",
			Framework: v1beta1.PipelineFramework{Name: "kfpsdk", Parameters: map[string]apiextensionsv1.JSON{"components": rawJSON(`"p.build"`)}},
			Env:       []v1beta1.NamedValue{{Name: "A", Value: "1"}}},
	}
	require.NoError(t, cp.Client.Create(ctx, hub))

	alpha := &v1alpha6.Pipeline{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(hub), alpha))
	assert.Equal(t, "kfp", alpha.Spec.Provider)
	assert.Equal(t, "p.build", alpha.Spec.TfxComponents)
	assert.Contains(t, alpha.Annotations[v1alpha6.AnnotationV1beta1Remainder], `"providerNamespace":"team-a"`)

	alpha.Spec.Env = append(alpha.Spec.Env, v1alpha6.NamedValue{Name: "B"})
	require.NoError(t, cp.Client.Update(ctx, alpha))

	got := &v1beta1.Pipeline{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(hub), got))
	assert.Equal(t, hub.Spec.Provider, got.Spec.Provider)
	assert.Equal(t, hub.Spec.Framework, got.Spec.Framework)
	assert.Equal(t, []v1beta1.NamedValue{{Name: "A", Value: "1"}, {Name: "B"}}, got.Spec.Env)
	assert.Empty(t, got.Annotations)
}

// TestValueBounds: a value is text of at most 32768 bytes (as v1beta1's)
// or a whole number.
func TestValueBounds(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	pipeline := func(name string, value any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pipelines.kubeflow.org/v1alpha6", "kind": "Pipeline",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"image": "img:1", "env": []any{map[string]any{"name": "A", "value": value}}},
		}}
	}
	require.NoError(t, cp.Client.Create(ctx, pipeline("number", int64(100))))
	require.NoError(t, cp.Client.Create(ctx, pipeline("text", strings.Repeat("x", 32768))))
	err := cp.Client.Create(ctx, pipeline("too-long", strings.Repeat("x", 32769)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.env[0].value")
	require.Error(t, cp.Client.Create(ctx, pipeline("fraction", 1.5)))
}
