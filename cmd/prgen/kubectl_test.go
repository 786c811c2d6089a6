package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

// runMainEnv makes this test binary run prgen's main instead of the tests,
// so a test can signal a real prgen process.
const runMainEnv = "PRGEN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(mainCode())
	}
	os.Exit(testenv.RunTests(m, &cp))
}

// kubectl runs the real kubectl against the test control plane.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := cp.Kubectl(t, stdin, args...)
	require.NoError(t, err, "kubectl %v: %s", args, out)
	return out
}

func TestKubectlCreateMakesNewRunsEachTime(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "prgen-"}}
	require.NoError(t, cp.Client.Create(ctx, ns))

	out, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "-n", ns.Name)
	require.NoError(t, err, stderr)
	const n = 4

	kubectl(t, out, "create", "-f", "-")
	list := &tektonv1.PipelineRunList{}
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(ns.Name)))
	assert.Len(t, list.Items, n)
	names := map[string]bool{}
	for _, pr := range list.Items {
		names[pr.Name] = true
		assert.True(t, strings.HasPrefix(pr.Name, pr.Labels["app"]+"-"+pr.Labels["version"]+"-"), pr.Name)
	}
	assert.Len(t, names, n, "distinct names")

	kubectl(t, out, "create", "-f", "-")
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(ns.Name)))
	assert.Len(t, list.Items, 2*n, "a second create starts a second set of runs")

	// One application at one version, found again by its labels. The
	// deprecated --select warns on stderr only: kubectl reads stdout as is.
	one, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "-n", ns.Name, "--select", "app=notebook-controller,version=v0.7")
	require.NoError(t, err, stderr)
	kubectl(t, one, "create", "-f", "-")
	got := kubectl(t, "", "get", "pipelineruns", "-n", ns.Name, "-l", "app=notebook-controller,version=v0.7", "-o", "name")
	assert.Len(t, strings.Fields(got), 3, "two from the bulk creates and one selected")

	// JSON output is a List kubectl accepts as well.
	asJSON, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "-n", ns.Name, "-o", "json")
	require.NoError(t, err, stderr)
	kubectl(t, asJSON, "create", "-f", "-")
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(ns.Name)))
	assert.Len(t, list.Items, 3*n+1)
}
