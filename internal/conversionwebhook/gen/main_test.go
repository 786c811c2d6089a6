package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const twoVersions = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: runs.pipelines.kubeflow.org
spec:
  group: pipelines.kubeflow.org
  versions:
  - name: v1alpha6
    served: true
    storage: false
  - name: v1beta1
    served: true
    storage: true
`

func TestAddConversionInsertsTheWebhookOnceAndOnlyForSeveralVersions(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	one := filepath.Join(dir, "one.yaml")
	require.NoError(t, os.WriteFile(two, []byte(twoVersions), 0o644))
	single := []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: x.example.com
spec:
  group: example.com
  versions:
  - name: v1
    served: true
    storage: true
`)
	require.NoError(t, os.WriteFile(one, single, 0o644))

	for range 2 { // a second run changes nothing
		require.NoError(t, addConversion(two))
		require.NoError(t, addConversion(one))
	}

	data, err := os.ReadFile(two)
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(data, &crd))
	require.NotNil(t, crd.Spec.Conversion)
	require.Equal(t, apiextensionsv1.WebhookConverter, crd.Spec.Conversion.Strategy)
	svc := crd.Spec.Conversion.Webhook.ClientConfig.Service
	require.Equal(t, namespace, svc.Namespace)
	require.Equal(t, service, svc.Name)
	require.Len(t, crd.Spec.Versions, 2, "the rest of the CRD is kept")

	data, err = os.ReadFile(one)
	require.NoError(t, err)
	require.Equal(t, string(single), string(data), "a single-version CRD needs no conversion")
}
