//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestV1alpha6ManifestsConvertThroughTheOperatorsWebhook applies
// kfp-operator's own v0.6 manifests as they are published: the operator
// installed by its chart serves the conversion with the certificate it
// issued itself, the objects read back as v1beta1 with kfp-operator's
// mapping, and read as v1alpha6 again, after a write through v1beta1,
// they are what was applied.
func TestV1alpha6ManifestsConvertThroughTheOperatorsWebhook(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "v1alpha6")

	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "pipelines.pipelines.kubeflow.org"}, &crd))
	require.NotNil(t, crd.Spec.Conversion.Webhook, "the CRD converts through a webhook")
	assert.NotEmpty(t, crd.Spec.Conversion.Webhook.ClientConfig.CABundle, "the operator injected its CA")

	for _, sample := range []string{"v0.6.0-reference-resources-pipeline.yaml", "v0.6.0-reference-resources-runconfiguration.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "samples", "kfp-operator", "v1alpha6", sample))
		require.NoError(t, err)
		js, err := yaml.YAMLToJSON(data)
		require.NoError(t, err)
		applied := &unstructured.Unstructured{}
		require.NoError(t, applied.UnmarshalJSON(js)) // numbers as the API's JSON reads them
		applied.SetNamespace(ns)
		require.NoError(t, cl.Create(ctx, applied.DeepCopy()), sample)

		kind, name := applied.GetKind(), applied.GetName()
		stored := get(t, kind, ns, name)
		require.NotNil(t, stored, "%s reads back as v1beta1", sample)
		switch kind {
		case "Pipeline":
			fw, _, _ := unstructured.NestedMap(stored.Object, "spec", "framework")
			assert.Equal(t, map[string]any{"name": "tfx", "parameters": map[string]any{"components": "base_pipeline.create_components"}}, fw)
			provider, _, _ := unstructured.NestedString(stored.Object, "spec", "provider")
			assert.Equal(t, "kfp", provider)
		case "RunConfiguration":
			path, _, _ := unstructured.NestedSlice(stored.Object, "spec", "run", "artifacts")
			assert.Equal(t, []any{map[string]any{"name": "serving-model", "path": "Pusher:pushed_model:0[pushed == 1]"}}, path)
		}

		// A write through v1beta1 (a label) keeps what only v1alpha6 says.
		patch(t, kind, ns, name, `{"metadata":{"labels":{"touched":"through-v1beta1"}}}`)
		back := &unstructured.Unstructured{}
		back.SetAPIVersion("pipelines.kubeflow.org/v1alpha6")
		back.SetKind(kind)
		require.NoError(t, cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, back))
		assert.Equal(t, applied.Object["spec"], back.Object["spec"], "%s read as v1alpha6 is what was applied", sample)
		assert.Equal(t, "through-v1beta1", back.GetLabels()["touched"])
	}
}

// TestTheFinalizerIsAddedAsTheAPIServerCreates: on the real API server the
// chart's finalizer webhook, reached through its Service with the CA the
// operator injected, stores an Experiment with the backend finalizer from
// its first version (the create's response has it), in either API version
// (kfp-operator's v1alpha6 manifests too); a RunConfiguration is stored as
// sent.
func TestTheFinalizerIsAddedAsTheAPIServerCreates(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "finalizer")
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: "kfp-tekton-operator-finalizer"}, &cfg))
	require.Len(t, cfg.Webhooks, 1)
	waitFor(t, time.Minute, "the operator to inject its CA into the finalizer webhook", func() (bool, string) {
		require.NoError(t, cl.Get(ctx, client.ObjectKey{Name: cfg.Name}, &cfg))
		return len(cfg.Webhooks[0].ClientConfig.CABundle) > 0, "no caBundle"
	})
	for _, c := range []struct {
		apiVersion, kind string
		spec             map[string]any
		want             []any
	}{
		{"pipelines.kubeflow.org/v1beta1", "Experiment", map[string]any{"provider": "none", "description": "x"}, []any{"pipelines.kubeflow.org/backend"}},
		{"pipelines.kubeflow.org/v1alpha6", "Experiment", map[string]any{"description": "x"}, []any{"pipelines.kubeflow.org/backend"}},
		{"pipelines.kubeflow.org/v1beta1", "RunConfiguration", map[string]any{"run": map[string]any{"provider": "none", "pipeline": "p"}}, nil},
	} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": c.apiVersion, "kind": c.kind,
			"metadata": map[string]any{"namespace": ns, "generateName": "created-"}, "spec": c.spec}}
		require.NoError(t, cl.Create(ctx, obj), "%s %s", c.apiVersion, c.kind)
		finalizers, _, _ := unstructured.NestedSlice(obj.Object, "metadata", "finalizers")
		assert.Equal(t, c.want, finalizers, "%s %s as the create returned it", c.apiVersion, c.kind)
	}
}
