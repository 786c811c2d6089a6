//go:build e2e

package e2e

// The operator's Helm release and Deployment, which some tests reconfigure
// for a while: each gives back what was there, whoever set it (make demo,
// hack/install-operator.sh, someone by hand), not what the suite assumes.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const operatorRelease = "kfp-tekton-operator"

// operatorUserValues are the values the operator's release was installed
// or last upgraded with (helm get values: those set, not the chart's
// defaults).
func operatorUserValues(t *testing.T) map[string]any {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "bin", "helm"), "get", "values", operatorRelease, "--namespace", operatorNamespace, "--output", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr // warnings are no JSON
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm get values %s: %v\n%s", operatorRelease, err, stderr.String())
	}
	var values map[string]any
	require.NoError(t, json.Unmarshal(out, &values), "helm get values: %s", out)
	if values == nil { // "null": installed with none
		values = map[string]any{}
	}
	return values
}

// upgradeOperator upgrades the operator's release with args (values) and
// waits for its pods.
func upgradeOperator(t *testing.T, args ...string) {
	t.Helper()
	run(t, filepath.Join(root, "bin", "helm"), append([]string{"upgrade", operatorRelease,
		filepath.Join(root, "config", "helm", "kfp-tekton-operator"), "--namespace", operatorNamespace,
		"--wait", "--timeout", "180s"}, args...)...)
	run(t, "kubectl", "rollout", "status", "-n", operatorNamespace, "deploy/kfp-tekton-operator", "--timeout=180s")
}

// restoreOperatorValuesAtCleanup gives the operator's release back the
// values saved (operatorUserValues), the suite's event sink left out, when
// the test ends.
func restoreOperatorValuesAtCleanup(t *testing.T, saved map[string]any) {
	t.Helper()
	js, err := json.Marshal(withoutTestSinks(saved))
	require.NoError(t, err)
	t.Cleanup(func() {
		f, err := os.CreateTemp("", "kfp-tekton-operator-values-*.json")
		require.NoError(t, err)
		defer os.Remove(f.Name())
		_, err = f.Write(js)
		require.NoError(t, errors.Join(err, f.Close()))
		upgradeOperator(t, "--reset-values", "--values", f.Name())
	})
}

// operatorValues upgrades the operator's release with set (a helm --set
// value) until the test ends, then restores the values it had.
func operatorValues(t *testing.T, set string) {
	t.Helper()
	restoreOperatorValuesAtCleanup(t, operatorUserValues(t))
	upgradeOperator(t, "--reuse-values", "--set", set)
}

// operatorReplicas is how many replicas the operator's Deployment asks for.
func operatorReplicas(t *testing.T) string {
	t.Helper()
	var d appsv1.Deployment
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: "kfp-tekton-operator"}, &d))
	if d.Spec.Replicas == nil {
		return "1"
	}
	return strconv.Itoa(int(*d.Spec.Replicas))
}
