package config_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"
)

// kfpOperatorRefuses are the published examples kfp-operator's own API
// refuses too (its CRDs, strict field validation as kubectl applies):
// mistakes in its docs, or the shape of a v1beta1 it has since changed.
// Each must be refused here for the same reason, in the API server's
// words; every other example must be accepted.
var kfpOperatorRefuses = map[string]string{
	// Its v1alpha6 Pipeline has no framework field (tfxComponents is v1alpha6's).
	"v1alpha6/docs-reference-resources-pipeline.yaml": `unknown field "spec.framework"`,
	"v1alpha6/master-quickstart-pipeline.yaml":        `unknown field "spec.framework"`,
	// Its Experiment's field is description.
	"v1alpha6/quickstart-experiment.yaml": `unknown field "spec.Description"`,
	// tfxComponents is v1alpha6's; v1beta1 has framework.parameters.
	"v1beta1/dependent-pipeline-examples.yaml": `unknown field "spec.tfxComponents"`,
	"v1beta1/dependent-pipeline-training.yaml": `unknown field "spec.tfxComponents"`,
	// Its v1beta1 run spec requires provider.
	"v1beta1/dependent-runconfiguration-examples.yaml": `spec.run.provider: Required value`,
	"v1beta1/dependent-runconfiguration-training.yaml": `spec.run.provider: Required value`,
	// env values are strings in every kfp-operator version.
	"v1beta1/docs-reference-frameworks-tfx-pipeline.yaml": `spec.env[0].value in body must be of type string`,
	"v1beta1/docs-reference-resources-pipeline.yaml":      `spec.env[0].value in body must be of type string`,
	"v1beta1/v0.7.0-reference-resources-pipeline.yaml":    `spec.env[0].value in body must be of type string`,
	// framework.type was an earlier v1beta1's; the released one has framework.name.
	"v1beta1/kfpsdk-quickstart-pipeline.yaml":                 `unknown field "spec.framework.type"`,
	"v1beta1/quickstart-with-dependencies-base-pipeline.yaml": `unknown field "spec.framework.type"`,
}

// TestKfpOperatorManifestsAreAccepted dry-runs, against the API server with
// our CRDs, every example manifest kfp-operator publishes
// (config/samples/kfp-operator/<apiVersion>/, each naming its source on its
// first line): users' inputs, which must be accepted as they are, except
// those kfp-operator's own API refuses (kfpOperatorRefuses). Each is
// created in a namespace the test makes (its own namespace, if any, is
// replaced), server-side and with strict field validation, as kubectl apply
// sends it.
//
// (It shares the control plane config_test's TestMain starts, so it is in
// package config_test like charts_test.go.)
func TestKfpOperatorManifestsAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(), "config", "samples", "kfp-operator", "*", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no manifests under config/samples/kfp-operator")
	sort.Strings(files)

	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kfp-operator-manifests-"}}
	require.NoError(t, cp.Client.Create(ctx, ns))
	t.Cleanup(func() { _ = cp.Client.Delete(ctx, ns) })

	seen := map[string]bool{}
	for _, file := range files {
		name, err := filepath.Rel(filepath.Join(root(), "config", "samples", "kfp-operator"), file)
		require.NoError(t, err)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(data), "# Source: sky-uk/kfp-operator "), "%s: the first line must name its source", name)
			obj := &unstructured.Unstructured{}
			require.NoError(t, sigsyaml.Unmarshal(data, &obj.Object), "%s is not YAML", name)
			require.Equal(t, filepath.Dir(name), strings.TrimPrefix(obj.GetAPIVersion(), "pipelines.kubeflow.org/"),
				"%s: filed under the wrong apiVersion", name)
			obj.SetNamespace(ns.Name)
			err = cp.Client.Create(ctx, obj, client.DryRunAll, client.FieldValidation("Strict"))
			if why, refused := kfpOperatorRefuses[name]; refused {
				require.Error(t, err, "%s is accepted, though kfp-operator refuses it (%s): take it off kfpOperatorRefuses", name, why)
				assert.Contains(t, err.Error(), why, "%s is refused for another reason than kfp-operator's", name)
				return
			}
			assert.NoError(t, err, "the API server refuses %s (%s)", name, sourceOf(data))
		})
	}
	for name := range kfpOperatorRefuses {
		assert.True(t, seen[name], "kfpOperatorRefuses names %s, which is not in config/samples/kfp-operator", name)
	}
}

func sourceOf(manifest []byte) string {
	first, _, _ := strings.Cut(string(manifest), "\n")
	return strings.TrimPrefix(first, "# Source: ")
}
