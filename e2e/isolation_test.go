//go:build e2e

package e2e

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
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
	fixturePipeline(t, ns, "isolated")
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
					if v.PersistentVolumeClaim != nil {
						definitionVolumeWrittenThroughFSGroup(t, ns, v.PersistentVolumeClaim.ClaimName)
					}
				}
				assert.Empty(t, pod.Labels[contract.LabelCallsProvider], "%s: the provider service's NetworkPolicy does not admit it", pod.Name)
				continue
			}
			providerPods++
			assert.Equal(t, "true", pod.Labels[contract.LabelCallsProvider], "%s: Tekton copied the Task's label that admits it to a provider service", pod.Name)
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

// definitionVolumeWrittenThroughFSGroup checks the definition's volume is
// like a real CSI volume (a directory made root's, 0755, where a pod not
// running as root cannot write) and that the kubelet gave it to the compile
// pod's fsGroup: how the seal step, not root, wrote the definition.
func definitionVolumeWrittenThroughFSGroup(t *testing.T, ns, claimName string) {
	t.Helper()
	var claim corev1.PersistentVolumeClaim
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: claimName}, &claim))
	var pv corev1.PersistentVolume
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Name: claim.Spec.VolumeName}, &pv))
	require.NotNil(t, pv.Spec.Local, "%s is a local volume (the kubelet ignores fsGroup on hostPath ones)", pv.Name)
	info, err := os.Stat(pv.Spec.Local.Path)
	require.NoError(t, err)
	st := info.Sys().(*syscall.Stat_t)
	assert.EqualValues(t, 0, st.Uid, "made root's")
	assert.EqualValues(t, taskdef.StepUser, st.Gid, "the kubelet gave it to the fsGroup")
	assert.NotZero(t, info.Mode().Perm()&0o020, "group-writable: %v", info.Mode())
}
