//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompilerCannotReachProviderSecrets: the compile step (tenant code: the
// compiler injected into the Pipeline's image) runs with no service account
// token and none of the provider's files in sight, while the provider step of
// the same run still has its token; the provider gets the definition the
// compiler wrote, staged by the helper. Proven from what the fixture compiler
// and provider found on the node.
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
		Pipeline string
		Sees     []string
	}
	receivedJSON(t, ns, "Pipeline", "isolated", "pipeline definition ", &definition)
	assert.Equal(t, "isolated", definition.Pipeline, "the provider received the compiled definition")
	require.NotNil(t, definition.Sees, "the fixture compiler reported what it sees")
	assert.Empty(t, definition.Sees, "the compile step sees no service account token and none of the provider's files")
	t.Logf("compile step sees of the token and provider files: %q", definition.Sees)

	var provider struct{ ServiceAccountToken bool }
	receivedJSON(t, ns, "Pipeline", "isolated", "environment ", &provider)
	assert.True(t, provider.ServiceAccountToken, "the provider step keeps its service account token")
	t.Logf("provider step has a service account token: %t", provider.ServiceAccountToken)

	// And on the pod: the token volume is mounted in the provider's step, not the compiler's.
	for _, pr := range runsOf(t, ns, "Pipeline", "isolated") {
		for _, pod := range podsOf(t, ns, pr.Name) {
			for _, c := range pod.Spec.Containers {
				token := ""
				for _, m := range c.VolumeMounts {
					if m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" {
						token = m.Name
					}
				}
				switch c.Name {
				case "step-inject-compiler", "step-compile":
					assert.Equal(t, "no-sa-token", token, "%s: %s mounts the empty volume over the token", pod.Name, c.Name)
				case "step-provider":
					assert.NotEqual(t, "no-sa-token", token, "%s: %s", pod.Name, c.Name)
					assert.NotEmpty(t, token, "%s: %s has the token", pod.Name, c.Name)
				}
				t.Logf("pod %s container %s: token volume %q", pod.Name, c.Name, token)
			}
		}
	}
}
