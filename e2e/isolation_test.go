//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompilerCannotReachProviderSecrets: the compiler (tenant code: the
// compiler injected into the Pipeline's image) runs in a pod of its own, as
// the compiler account with no token mounted anywhere in the pod, so the API
// server refuses it; the provider's pod runs no tenant code and still has
// its token. A link the compiler plants where the seal step writes is
// replaced, and the provider gets exactly the definition the compiler wrote.
// Proven from what the fixture compiler and provider found on the node.
func TestCompilerCannotReachProviderSecrets(t *testing.T) {
	ns := namespace(t, "e2e-isolation")
	installProvider(t, ns, "kfp")
	create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: isolated}
spec:
  provider: kfp
  image: %s
  framework: {name: fixture}
`, images["FIXTURE_PIPELINE_IMAGE"]))
	waitFor(t, syncTimeout, "Pipeline created", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "isolated")) })

	var definition struct {
		Pipeline  string
		Sees      []string
		APIServer string
		Planted   string
	}
	receivedJSON(t, ns, "Pipeline", "isolated", "pipeline definition ", &definition)
	assert.Equal(t, "isolated", definition.Pipeline, "the provider received the compiled definition")
	require.NotNil(t, definition.Sees, "the fixture compiler reported what it sees")
	assert.Empty(t, definition.Sees, "the compile step sees no token and none of the provider's files")
	assert.Contains(t, []string{"401", "403"}, definition.APIServer, "the API server refuses the compile pod")
	assert.Equal(t, "/workspace/definition/pipeline.yaml", definition.Planted, "the compiler could plant a link where the seal step writes")
	t.Logf("compile step: sees %q; the API server answered %s; planted a link at %q, which the seal step replaced",
		definition.Sees, definition.APIServer, definition.Planted)

	var provider struct{ ServiceAccountToken bool }
	receivedJSON(t, ns, "Pipeline", "isolated", "environment ", &provider)
	assert.True(t, provider.ServiceAccountToken, "the provider step keeps its service account token")

	// And on the pods: the compile pod is another pod, as the compiler
	// account, with no token volume; the provider's pod runs no tenant code.
	tenant := map[string]bool{"step-inject-compiler": true, "step-compile": true}
	compilePods, providerPods := 0, 0
	for _, pr := range runsOf(t, ns, "Pipeline", "isolated") {
		for _, pod := range podsOf(t, ns, pr.Name) {
			if pod.Labels["tekton.dev/pipelineTask"] == "compile" {
				compilePods++
				assert.Equal(t, "kfp-tekton-compiler", pod.Spec.ServiceAccountName, pod.Name)
				if assert.NotNil(t, pod.Spec.AutomountServiceAccountToken, pod.Name) {
					assert.False(t, *pod.Spec.AutomountServiceAccountToken, pod.Name)
				}
				for _, v := range pod.Spec.Volumes {
					assert.Nil(t, v.Projected, "%s: volume %s is a projected (token) volume", pod.Name, v.Name)
				}
				continue
			}
			providerPods++
			for _, c := range pod.Spec.Containers {
				assert.False(t, tenant[c.Name], "%s runs tenant code %s beside the provider", pod.Name, c.Name)
				if c.Name == "step-provider" {
					token := false
					for _, m := range c.VolumeMounts {
						token = token || m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount"
					}
					assert.True(t, token, "%s: the provider step has its token", pod.Name)
				}
			}
		}
	}
	assert.Equal(t, 1, compilePods, "one compile pod")
	assert.Equal(t, 1, providerPods, "one provider pod")
}
