// Package config_test checks the install manifests against a real API
// server: the charts render and apply (server-side dry run), the kustomize
// bases match them, and the RBAC they grant is enough for the operator to
// do its work, and no more is needed.
package config_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

func root() string { return testenv.RepoRoot() }

// helm renders a chart with bin/helm (built by make from the module proxy).
func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(root(), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("make", "-C", root(), "bin/helm")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "building helm: %s", out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm %v: %s", args, stderr.String())
	return string(out)
}

func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	return cp.Kubectl(t, stdin, args...)
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := cp.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil {
		require.True(t, strings.Contains(err.Error(), "already exists"), err)
	}
}

func objects(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out
}

func TestChartsApplyWithServerSideDryRun(t *testing.T) {
	ensureNamespace(t, "kfp-tekton-operator")
	ensureNamespace(t, "tekton-pipelines") // Tekton's, where the operator may read its feature flags
	ensureNamespace(t, "team-a")
	ensureNamespace(t, "kfp-workflows")
	cases := map[string][]string{
		"operator defaults":          {"template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator", "--include-crds"},
		"operator workflowNamespace": {"template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator", "--set", "workflowNamespace=kfp-workflows"},
		"provider":                   {"template", "prv", "config/helm/kfp-tekton-provider", "--namespace", "team-a", "-f", "config/provider/values.yaml"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			rendered := helm(t, args...)
			out, err := kubectl(t, rendered, "apply", "--server-side", "--dry-run=server", "--field-manager=chart-test", "-f", "-")
			require.NoError(t, err, out)
			for _, u := range objects(t, rendered) {
				if u.GetKind() == "ConfigMap" {
					assert.Equal(t, "kfp-tekton-operator-config", u.GetName(), "the only ConfigMap is the operator's own configuration: no providers ConfigMap")
				}
			}
		})
	}

	rendered := helm(t, cases["operator workflowNamespace"]...)
	var workflowRole bool
	for _, u := range objects(t, rendered) {
		workflowRole = workflowRole || (u.GetKind() == "Role" && u.GetNamespace() == "kfp-workflows")
	}
	assert.True(t, workflowRole, "a workflowNamespace gets the operator's namespaced rights from the operator chart")
}

func TestProviderChartRequiresAnImage(t *testing.T) {
	bin := filepath.Join(root(), "bin", "helm")
	helm(t, "version") // builds it if needed
	out, err := exec.Command(bin, "template", "p", filepath.Join(root(), "config/helm/kfp-tekton-provider")).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "provider.image is required")
}

func TestKustomizeBasesApply(t *testing.T) {
	for _, dir := range []string{"config/default", "config/provider"} {
		out, err := kubectl(t, "", "apply", "--server-side", "--dry-run=server", "--field-manager=kustomize-test", "-k", dir)
		require.NoError(t, err, "%s: %s", dir, out)
	}
}

func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	bases, err := filepath.Glob(filepath.Join(root(), "config/crd/bases/*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, bases)
	for _, b := range bases {
		want, err := os.ReadFile(b)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root(), "config/helm/kfp-tekton-operator/crds", filepath.Base(b)))
		require.NoError(t, err, "run make manifests")
		assert.Equal(t, string(want), string(got), "%s is stale: run make manifests", filepath.Base(b))
	}
}

// The operator, holding only the rights the charts grant, makes a Provider
// Ready: the least-privilege RBAC is enough.
func TestChartRBACIsEnoughForTheOperator(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, "kfp-tekton-operator")
	ensureNamespace(t, "tekton-pipelines")
	ns := "rbac-team"
	ensureNamespace(t, ns)
	operatorRBAC := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator",
		"--show-only", "templates/rbac.yaml", "--show-only", "templates/serviceaccount.yaml")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	providerChart := helm(t, "template", "prv", "config/helm/kfp-tekton-provider", "--namespace", ns,
		"--set", "provider.image="+image, "--set", "provider.name=kfp")
	for _, manifests := range []string{operatorRBAC, providerChart} {
		out, err := kubectl(t, manifests, "apply", "--server-side", "--field-manager=rbac-test", "-f", "-")
		require.NoError(t, err, out)
	}

	asOperator := rest.CopyConfig(cp.Config)
	asOperator.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:kfp-tekton-operator:kfp-tekton-operator",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:kfp-tekton-operator", "system:authenticated"},
	}
	mgr, err := operator.NewManager(asOperator, operator.Config{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0", KubeAPIQPS: 100, KubeAPIBurst: 200,
		MaxConcurrentReconciles: 1, RetryAfter: metav1.Duration{Duration: 200 * time.Millisecond}, SkipNameValidation: true,
	}, "rbac-test")
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	p := &pipelinesv1beta1.Provider{}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		require.NoError(c, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kfp"}, p))
		cond := meta.FindStatusCondition(p.Status.Conditions, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Equal(c, metav1.ConditionTrue, cond.Status, cond.Message)
		}
	}, 30*time.Second, 100*time.Millisecond)

	// And it can clean up after itself: the finalizer removes the Tasks.
	require.NoError(t, cp.Client.Delete(ctx, p))
	require.Eventually(t, func() bool {
		err := cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Provider{})
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 100*time.Millisecond)
	tasks := &tektonv1.TaskList{}
	require.NoError(t, cp.Client.List(ctx, tasks, client.InNamespace(ns)))
	assert.Empty(t, tasks.Items)
}
