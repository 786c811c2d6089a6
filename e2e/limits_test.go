//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSizeLimitsAreWhatFitsOnTheNode: the largest values the schema admits
// reach the provider on a real node unchanged (no step fails to start with
// E2BIG), and values the schema admits but that would not fit once
// JSON-escaped are refused with InvalidSpec before any PipelineRun exists.
func TestSizeLimitsAreWhatFitsOnTheNode(t *testing.T) {
	ns := namespace(t, "e2e-limits")
	installProvider(t, ns, "kfp")
	fixturePipeline(t, ns, "big")

	runOf := func(name string, values ...string) *unstructured.Unstructured {
		var params []any
		for i, v := range values {
			params = append(params, map[string]any{"name": fmt.Sprintf("p%d", i), "value": v})
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gv.String(), "kind": "Run", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"provider": "kfp", "pipeline": "big", "experimentName": "e", "parameters": params},
		}}
	}
	// The schema's ceiling: 32 KiB per value, 64 KiB in all; with a few
	// thousand of the characters JSON escapes six-fold (the
	// encoded resource then just fits a step's 128 KiB variable).
	largest := []string{strings.Repeat("x", 32768), strings.Repeat("y", 27000) + strings.Repeat("<", 5000)}
	// Within the schema, but 384 KiB once escaped: more than an environment
	// variable holds.
	tooLarge := []string{strings.Repeat("<", 32768), strings.Repeat("&", 32768)}
	for _, obj := range []*unstructured.Unstructured{runOf("largest", largest...), runOf("too-large", tooLarge...)} {
		require.NoError(t, cl.Create(context.Background(), obj))
	}

	waitFor(t, syncTimeout, "the largest admitted Run synchronised", func() (bool, string) {
		return synchronised(get(t, "Run", ns, "largest"))
	})
	var resource struct {
		Spec struct {
			Parameters []struct{ Name, Value string } `json:"parameters"`
		} `json:"spec"`
	}
	receivedJSON(t, ns, "Run", "largest", "received resource ", &resource)
	require.Len(t, resource.Spec.Parameters, 2)
	for i, p := range resource.Spec.Parameters {
		assert.True(t, p.Value == largest[i], "parameter %s arrived unchanged (%d bytes, want %d)", p.Name, len(p.Value), len(largest[i]))
	}

	waitFor(t, syncTimeout, "the oversized Run refused", func() (bool, string) {
		status, reason, message := condition(get(t, "Run", ns, "too-large"), "Ready")
		return status == "False" && reason == "InvalidSpec" && strings.Contains(message, "more than a step's environment variable can hold"),
			fmt.Sprintf("Ready=%s %s: %.200s", status, reason, message)
	})
	assert.Empty(t, runsOf(t, ns, "Run", "too-large"), "no PipelineRun for an operation that cannot start")
}

// TestLongestProviderNameEndToEnd: a Provider named with all 253 characters
// a name may have serves a Pipeline (compiled), an Experiment and a Run on
// the node, from create to backend delete: its runs carry the name shortened
// in their label and whole in their annotation.
func TestLongestProviderNameEndToEnd(t *testing.T) {
	ns := namespace(t, "e2e-longname")
	installProvider(t, ns, "kfp") // its chart makes the kfp-provider account and the operator's rights
	segment := strings.Repeat("p", 62)
	name := strings.Join([]string{"a" + segment, "b" + segment, "c" + segment, "d" + strings.Repeat("p", 60)}, ".")
	require.Len(t, name, 253)
	provider(t, ns, name, images["FIXTURE_PROVIDER_IMAGE"], "")
	create(t, ns, fmt.Sprintf("kind: Pipeline\nmetadata: {name: long}\nspec: {provider: %s, image: %s, framework: {name: fixture}}\n",
		name, images["FIXTURE_PIPELINE_IMAGE"]))
	create(t, ns, fmt.Sprintf("kind: Experiment\nmetadata: {name: long}\nspec: {provider: %s, description: long}\n", name))
	create(t, ns, fmt.Sprintf("kind: Run\nmetadata: {name: long}\nspec: {provider: %s, pipeline: long}\n", name))
	kinds := []string{"Pipeline", "Experiment", "Run"}
	for _, kind := range kinds {
		waitFor(t, syncTimeout, kind+" synchronised", func() (bool, string) { return synchronised(get(t, kind, ns, "long")) })
		for _, pr := range runsOf(t, ns, kind, "long") {
			label := pr.Labels["pipelines.kubeflow.org/provider"]
			assert.LessOrEqual(t, len(label), 63, "%s: label %q", pr.Name, label)
			assert.NotEmpty(t, label, pr.Name)
			assert.Equal(t, ns+"/"+name, pr.Annotations["pipelines.kubeflow.org/provider"], pr.Name)
		}
	}
	for _, kind := range kinds {
		remove(t, kind, ns, "long")
	}
	for _, kind := range kinds {
		waitFor(t, syncTimeout, kind+" deleted from the backend and gone", func() (bool, string) {
			obj := get(t, kind, ns, "long")
			if obj == nil {
				return true, ""
			}
			_, why := readyIs(obj, "False")
			return false, why
		})
	}
	remove(t, "Provider", ns, name)
	waitFor(t, syncTimeout, "Provider gone", func() (bool, string) { return get(t, "Provider", ns, name) == nil, "still there" })
}
