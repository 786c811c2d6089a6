// Package config_test checks the install manifests against a real API
// server: the charts render and apply (server-side dry run), the kustomize
// bases match them, and the RBAC they grant is enough for the operator to
// do its work, and no more is needed.
package config_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/provider"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/finalizerwebhook"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
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

// withoutConversion is manifests with no CRD's spec.conversion: here
// envtest owns it (it points the CRDs at the test's own conversion
// webhook server by URL), and the generated service reference would
// conflict with it. The generated stanza is checked by
// TestCRDsConvertThroughTheOperatorsWebhook.
func withoutConversion(t *testing.T, manifests string) string {
	t.Helper()
	var out strings.Builder
	for _, u := range objects(t, manifests) {
		if u.GetKind() == "CustomResourceDefinition" {
			unstructured.RemoveNestedField(u.Object, "spec", "conversion")
		}
		data, err := sigsyaml.Marshal(u.Object)
		require.NoError(t, err)
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.String()
}

// TestCRDsConvertThroughTheOperatorsWebhook: every CRD that serves more
// than one version converts through the chart's webhook Service, at the
// path the operator serves.
func TestCRDsConvertThroughTheOperatorsWebhook(t *testing.T) {
	rendered := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator", "--include-crds")
	crds := 0
	for _, u := range objects(t, rendered) {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crds++
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		require.Len(t, versions, 2, "%s serves v1alpha6 and v1beta1", u.GetName())
		strategy, _, _ := unstructured.NestedString(u.Object, "spec", "conversion", "strategy")
		assert.Equal(t, "Webhook", strategy, u.GetName())
		svc, _, _ := unstructured.NestedMap(u.Object, "spec", "conversion", "webhook", "clientConfig", "service")
		assert.Equal(t, "map[name:kfp-tekton-operator-webhook namespace:kfp-tekton-operator path:/convert port:443]", fmt.Sprint(svc), u.GetName())
	}
	assert.Equal(t, 6, crds)
	assert.Contains(t, rendered, "name: kfp-tekton-operator-webhook\n", "the chart has the webhook's Service")
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
			out, err := kubectl(t, withoutConversion(t, rendered), "apply", "--server-side", "--dry-run=server", "--field-manager=chart-test", "-f", "-")
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
	for _, set := range []string{"provider.name=kfp", "provider.image=a,provider.serviceImage=b"} {
		out, err := exec.Command(bin, "template", "p", filepath.Join(root(), "config/helm/kfp-tekton-provider"), "--set", set).CombinedOutput()
		require.Error(t, err, set)
		assert.Contains(t, string(out), "set exactly one of provider.image (a CLI provider) and provider.serviceImage", set)
	}
	rendered := helm(t, "template", "p", "config/helm/kfp-tekton-provider", "--set", "provider.serviceImage=ghcr.io/org/kfp-provider-service:1")
	assert.Contains(t, rendered, `serviceImage: "ghcr.io/org/kfp-provider-service:1"`)
	assert.NotContains(t, rendered, "  image:")
}

func TestKustomizeBasesApply(t *testing.T) {
	for _, dir := range []string{"config/default", "config/provider"} {
		rendered, err := kubectl(t, "", "kustomize", dir)
		require.NoError(t, err, "%s: %s", dir, rendered)
		out, err := kubectl(t, withoutConversion(t, rendered), "apply", "--server-side", "--dry-run=server", "--field-manager=kustomize-test", "-f", "-")
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

// rbacRules is config/rbac/role.yaml, what controller-gen generated from the
// +kubebuilder:rbac markers, by scope: "" for the ClusterRole, otherwise the
// Role's namespace (operator-namespace, tekton-namespace, workflow-namespace).
func rbacRules(t *testing.T) map[string][]rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(), "config/rbac/role.yaml"))
	require.NoError(t, err, "run make manifests")
	out := map[string][]rbacv1.PolicyRule{}
	for _, u := range objects(t, string(data)) {
		var role rbacv1.Role // a ClusterRole's rules decode the same
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role))
		out[role.Namespace] = role.Rules
	}
	return out
}

// permissions expands rules into "group resource verb name" entries, name
// "*" for any; nonResourceURLs as "url verb".
func permissions(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				out = append(out, u+" "+v)
			}
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{"*"}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, n := range names {
						out = append(out, strings.Join([]string{g, res, v, n}, " "))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func renderedRules(t *testing.T, rendered, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, u := range objects(t, rendered) {
		if u.GetKind() == kind && u.GetName() == name {
			var role rbacv1.Role
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role))
			return role.Rules
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// The charts grant the operator exactly the generated rules: the operator
// chart's ClusterRole and Roles, and the provider chart's Role, which only
// narrows service accounts and secrets to the ones it names.
func TestChartRBACIsTheGeneratedRBAC(t *testing.T) {
	generated := rbacRules(t)
	require.Len(t, generated, 4, "a ClusterRole and the operator-, tekton- and workflow-namespace Roles")
	for _, chart := range []string{"kfp-tekton-operator", "kfp-tekton-provider"} {
		copied, err := os.ReadFile(filepath.Join(root(), "config/helm", chart, "rbac/role.yaml"))
		require.NoError(t, err, "run make manifests")
		want, err := os.ReadFile(filepath.Join(root(), "config/rbac/role.yaml"))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(copied), "%s/rbac/role.yaml is stale: run make manifests", chart)
	}

	op := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator",
		"--set", "workflowNamespace=kfp-workflows")
	for name, scope := range map[string]string{
		"ClusterRole/kfp-tekton-operator":                "",
		"Role/kfp-tekton-operator-leader-election":       "operator-namespace",
		"Role/kfp-tekton-operator-tekton-flags":          "tekton-namespace",
		"Role/kfp-tekton-operator-workflows":             "workflow-namespace",
		"ClusterRole/kfp-tekton-operator-metrics-reader": "metrics-reader",
	} {
		kind, n, _ := strings.Cut(name, "/")
		want := permissions(generated[scope])
		if scope == "metrics-reader" { // the scraper's, not the operator's
			want = []string{"/metrics get"}
		}
		if scope == "workflow-namespace" { // writes to accounts: only the compiler account's
			for i, p := range want {
				for _, v := range []string{"patch", "delete"} {
					if p == " serviceaccounts "+v+" *" {
						want[i] = " serviceaccounts " + v + " kfp-tekton-compiler"
					}
				}
			}
			sort.Strings(want)
		}
		assert.Equal(t, want, permissions(renderedRules(t, op, kind, n)), "operator chart %s", name)
	}

	want := map[string]bool{}
	for _, p := range permissions(generated["workflow-namespace"]) {
		want[p] = true
	}
	for _, pullSecrets := range [][]string{nil, {"regcred", "mirror"}} {
		args := []string{"template", "prv", "config/helm/kfp-tekton-provider", "--namespace", "team-a",
			"-f", "config/provider/values.yaml", "--set", "serviceAccount.name=runner"}
		for i, s := range pullSecrets {
			args = append(args, "--set", fmt.Sprintf("serviceAccount.imagePullSecrets[%d].name=%s", i, s))
		}
		got := permissions(renderedRules(t, helm(t, args...), "Role", "kfp-tekton-operator-workflows"))
		expected := []string{" serviceaccounts get runner", " serviceaccounts get kfp-tekton-compiler",
			" serviceaccounts create *", " serviceaccounts patch kfp-tekton-compiler", " serviceaccounts delete kfp-tekton-compiler"}
		for _, s := range pullSecrets {
			expected = append(expected, " secrets get "+s)
		}
		for p := range want {
			if !strings.HasPrefix(p, " serviceaccounts ") && !strings.HasPrefix(p, " secrets ") {
				expected = append(expected, p)
			}
		}
		require.True(t, want[" serviceaccounts get *"] && want[" secrets get *"], "the generated rules read service accounts and secrets")
		require.True(t, want[" serviceaccounts create *"] && want[" serviceaccounts delete *"], "the generated rules manage the compiler account")
		sort.Strings(expected)
		assert.Equal(t, expected, got, "provider chart with pull secrets %v", pullSecrets)
	}
}

// fakeTekton ends every PipelineRun of namespace as Tekton would, each
// create or update with the backend id "id-<owner>", until the test ends.
// fail, when it returns a non-empty message for a run, fails that run
// instead, its one TaskRun holding the message as the provider's error.
func fakeTekton(t *testing.T, namespace string, fail func(*tektonv1.PipelineRun) string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			runs := &tektonv1.PipelineRunList{}
			if err := cp.Client.List(ctx, runs, client.InNamespace(namespace)); err != nil {
				continue
			}
			for i := range runs.Items {
				if pr := &runs.Items[i]; !pr.IsDone() {
					_ = endRun(ctx, pr, fail(pr))
				}
			}
		}
	}()
}

func endRun(ctx context.Context, pr *tektonv1.PipelineRun, failure string) error {
	now := metav1.Now()
	cond := apis.Condition{Type: apis.ConditionSucceeded, Status: corev1.ConditionTrue, Reason: "Succeeded",
		LastTransitionTime: apis.VolatileTime{Inner: now}}
	pr.Status.StartTime, pr.Status.CompletionTime = &now, &now
	switch {
	case pr.Spec.Status == tektonv1.PipelineRunSpecStatusCancelled:
		cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, "Cancelled", "cancelled"
	case failure != "":
		tr := &tektonv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: pr.Namespace, Name: pr.Name + "-op"},
			Spec: tektonv1.TaskRunSpec{TaskRef: &tektonv1.TaskRef{Name: pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name}}}
		if err := client.IgnoreAlreadyExists(cp.Client.Create(ctx, tr)); err != nil {
			return err
		}
		tr.Status.Conditions = duckv1.Conditions{{Type: apis.ConditionSucceeded, Status: corev1.ConditionFalse, Reason: "Failed",
			Message: "step report failed", LastTransitionTime: apis.VolatileTime{Inner: now}}}
		tr.Status.Results = []tektonv1.TaskRunResult{{Name: taskdef.ResultProviderError, Type: tektonv1.ResultsTypeString,
			Value: *tektonv1.NewStructuredValues(failure)}}
		if err := cp.Client.Status().Update(ctx, tr); err != nil {
			return err
		}
		pr.Status.ChildReferences = []tektonv1.ChildStatusReference{{Name: tr.Name, PipelineTaskName: pr.Spec.PipelineSpec.Tasks[0].Name,
			TypeMeta: runtime.TypeMeta{APIVersion: "tekton.dev/v1", Kind: "TaskRun"}}}
		cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, "Failed", "Tasks Completed: 1 (Failed: 1)"
	default:
		pr.Status.Results = []tektonv1.PipelineRunResult{
			{Name: taskdef.ResultProviderID, Value: *tektonv1.NewStructuredValues("id-" + pr.Labels[contract.LabelOwnerName])},
			{Name: taskdef.ResultProviderError, Value: *tektonv1.NewStructuredValues("")},
		}
	}
	pr.Status.Conditions = duckv1.Conditions{cond}
	return cp.Client.Status().Update(ctx, pr)
}

// asOperator is the control plane's config impersonating the operator's
// service account: it holds exactly the rights its RoleBindings give it.
func asOperator(sa string) *rest.Config {
	c := rest.CopyConfig(cp.Config)
	c.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:kfp-tekton-operator:" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:kfp-tekton-operator", "system:authenticated"},
	}
	return c
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The operator, holding exactly the rights the charts grant, with leader
// election and secure metrics on, takes every kind through its whole
// lifecycle: a missing permission stops one of the steps below.
func TestChartRBACIsEnoughForEveryLifecycle(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, "kfp-tekton-operator")
	ensureNamespace(t, "tekton-pipelines")
	ns := "rbac-team"
	require.NoError(t, cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{contract.LabelPodSecurityEnforce: "restricted"}}}))
	flags := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tekton-pipelines", Name: provider.TektonFeatureFlags},
		Data: map[string]string{provider.FlagSetSecurityContext: "false"}}
	require.NoError(t, cp.Client.Create(ctx, flags))
	require.NoError(t, cp.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "regcred"},
		Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`)}}))

	// The operator's service account, as the chart binds it.
	const sa = "kfp-tekton-operator"
	operatorRBAC := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator",
		"--show-only", "templates/rbac.yaml", "--show-only", "templates/serviceaccount.yaml")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	compiler, _ := reg.Push("team/compiler-tfx:v1")
	providerChart := helm(t, "template", "prv", "config/helm/kfp-tekton-provider", "--namespace", ns,
		"--set", "provider.image="+image, "--set", "provider.name=kfp",
		"--set", "provider.frameworks[0].name=tfx", "--set", "provider.frameworks[0].image="+compiler,
		"--set", "serviceAccount.imagePullSecrets[0].name=regcred")
	for _, manifests := range []string{operatorRBAC, providerChart} {
		out, err := kubectl(t, manifests, "apply", "--server-side", "--field-manager=rbac-test", "-f", "-")
		require.NoError(t, err, out)
	}

	metricsPort := freePort(t)
	cfg := testenv.TestOperatorConfig(func(c *operator.Config) {
		c.Namespace = "kfp-tekton-operator" // its seal key's Secret: the chart grants get and create there
		c.LeaderElection, c.LeaderElectionNamespace, c.KubeAPIQPS, c.KubeAPIBurst = true, "kfp-tekton-operator", 100, 200
		c.RetryBackoffBase, c.RetryBackoffMax = metav1.Duration{Duration: 200 * time.Millisecond}, metav1.Duration{Duration: 400 * time.Millisecond}
	})
	cfg.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", metricsPort) // secure, as the chart serves them
	mgr, err := operator.NewManager(asOperator(sa), cfg, "rbac-test")
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	const wait, tick = 30 * time.Second, 100 * time.Millisecond
	ready := func(obj client.Object, conditions func() []metav1.Condition, reason string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			require.NoError(c, cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			cond := meta.FindStatusCondition(conditions(), pipelinesv1beta1.ConditionReady)
			if assert.NotNil(c, cond) {
				assert.Equal(c, reason, cond.Reason, cond.Message)
				assert.Equal(c, obj.GetGeneration(), cond.ObservedGeneration)
			}
		}, wait, tick, "%T %s", obj, obj.GetName())
	}
	gone := func(obj client.Object) {
		t.Helper()
		require.NoError(t, client.IgnoreNotFound(cp.Client.Delete(ctx, obj)))
		require.Eventually(t, func() bool {
			return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		}, wait, tick, "%T %s deleted", obj, obj.GetName())
	}
	change := func(obj client.Object, fn func()) {
		t.Helper()
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			fn()
			return cp.Client.Update(ctx, obj)
		}))
	}

	// Leader election: the lease, and the Event recorded on it.
	require.Eventually(t, func() bool {
		lease := &coordinationv1.Lease{}
		err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "kfp-tekton-operator", Name: "kfp-tekton-operator.pipelines.kubeflow.org"}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
	}, wait, tick, "leader elected")

	// Provider: Pod Security read (the namespace, Tekton's flags), Tasks
	// applied, its service account and pull secret read for the digests.
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kfp"}}
	ready(p, func() []metav1.Condition { return p.Status.Conditions }, pipelinesv1beta1.ReasonPodSecurityIncompatible)
	flags.Data[provider.FlagSetSecurityContext] = "true"
	require.NoError(t, cp.Client.Update(ctx, flags))
	ready(p, func() []metav1.Condition { return p.Status.Conditions }, pipelinesv1beta1.ReasonTasksApplied)
	names, err := tasks.Names()
	require.NoError(t, err)
	assert.Equal(t, names, p.Status.Tasks)
	change(p, func() {
		p.Spec.Parameters = map[string]apiextensionsv1.JSON{"endpoint": {Raw: []byte(`"http://kfp:8888"`)}}
	})
	ready(p, func() []metav1.Condition { return p.Status.Conditions }, pipelinesv1beta1.ReasonTasksApplied)
	// An edited Task is restored (the label-filtered watch, the apply).
	task := &tektonv1.Task{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names[0]}, task))
	task.Spec.Description = "edited by hand"
	require.NoError(t, cp.Client.Update(ctx, task))
	require.Eventually(t, func() bool {
		return cp.Client.Get(ctx, client.ObjectKeyFromObject(task), task) == nil && task.Spec.Description != "edited by hand"
	}, wait, tick, "edited Task restored")

	// Experiment "explained" fails with a provider error that only its
	// TaskRun holds, until the operator has said so; every other run succeeds.
	var failing atomic.Bool
	failing.Store(true)
	fakeTekton(t, ns, func(pr *tektonv1.PipelineRun) string {
		if pr.Labels[contract.LabelOwnerName] == "explained" && failing.Load() {
			return "backend said no"
		}
		return ""
	})

	pl := &pipelinesv1beta1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "penguin"},
		Spec: pipelinesv1beta1.PipelineSpec{Provider: "kfp", Image: "example.com/penguin:0.3.1",
			Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx"}}}
	exp := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "explained"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "one"}}
	rs := &pipelinesv1beta1.RunSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: pipelinesv1beta1.RunScheduleSpec{RunSpec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Schedule: pipelinesv1beta1.Schedule{CronExpression: "@daily"}}}
	run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "once"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin:1"}}
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "training"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "penguin"},
			Triggers: pipelinesv1beta1.Triggers{Schedules: []pipelinesv1beta1.Schedule{{CronExpression: "@daily"}},
				OnChange: []pipelinesv1beta1.OnChangeTrigger{pipelinesv1beta1.OnChangeRunSpec}}}}
	synced := pipelinesv1beta1.ReasonSynchronized
	for _, obj := range []client.Object{pl, exp, rs, run} {
		require.NoError(t, cp.Client.Create(ctx, obj))
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		require.NoError(c, cp.Client.Get(ctx, client.ObjectKeyFromObject(exp), exp))
		cond := meta.FindStatusCondition(exp.Status.Conditions, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			assert.Contains(c, cond.Message, "provider error", "the failure, read from the TaskRun")
			assert.Contains(c, cond.Message, "backend said no")
		}
	}, wait, 20*time.Millisecond)
	failing.Store(false)
	for _, s := range []lifecycle.Subject{pl, exp, rs, run} {
		ready(s, func() []metav1.Condition { return s.CommonStatus().Conditions }, synced)
		assert.Equal(t, "id-"+s.GetName(), s.CommonStatus().Provider.ID)
	}

	// Updates: each an update operation (a Run's spec cannot change).
	change(pl, func() { pl.Spec.Image = "example.com/penguin:0.4.0" })
	change(exp, func() { exp.Spec.Description = "two" })
	change(rs, func() { rs.Spec.Schedule.CronExpression = "@hourly" })
	for _, s := range []lifecycle.Subject{pl, exp, rs} {
		ready(s, func() []metav1.Condition { return s.CommonStatus().Conditions }, synced)
	}

	// RunConfiguration: its RunSchedule and Run made, a changed schedule
	// replacing its RunSchedule.
	require.NoError(t, cp.Client.Create(ctx, rc))
	ready(rc, func() []metav1.Condition { return rc.Status.Conditions }, synced)
	owned := func(cron string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			list := &pipelinesv1beta1.RunScheduleList{}
			require.NoError(c, cp.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID)}))
			if assert.Len(c, list.Items, 1) {
				assert.Equal(c, cron, list.Items[0].Spec.Schedule.CronExpression)
			}
			runs := &pipelinesv1beta1.RunList{}
			require.NoError(c, cp.Client.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID)}))
			assert.NotEmpty(c, runs.Items)
		}, wait, tick)
	}
	owned("@daily")
	change(rc, func() { rc.Spec.Triggers.Schedules[0].CronExpression = "@hourly" })
	ready(rc, func() []metav1.Condition { return rc.Status.Conditions }, synced)
	owned("@hourly")
	gone(rc)

	// Deletes: each a delete operation, then the finalizer goes. What the
	// RunConfiguration owned goes too (no garbage collector here).
	leftovers := []client.Object{}
	for _, l := range []client.ObjectList{&pipelinesv1beta1.RunScheduleList{}, &pipelinesv1beta1.RunList{}} {
		require.NoError(t, cp.Client.List(ctx, l, client.InNamespace(ns)))
		require.NoError(t, meta.EachListItem(l, func(o runtime.Object) error {
			leftovers = append(leftovers, o.(client.Object))
			return nil
		}))
	}
	for _, obj := range append(leftovers, exp, pl) {
		gone(obj)
	}

	// Secure metrics: a scraper bound to the metrics reader gets them, the
	// operator checking its token and its right with the API server.
	scraper := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}}
	require.NoError(t, cp.Client.Create(ctx, scraper))
	require.NoError(t, cp.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test-scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kfp-tekton-operator-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}}}))
	clientset, err := kubernetes.NewForConfig(cp.Config)
	require.NoError(t, err)
	token, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "scraper", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	https := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort), nil)
		require.NoError(c, err)
		req.Header.Set("Authorization", "Bearer "+token.Status.Token)
		resp, err := https.Do(req)
		require.NoError(c, err)
		defer resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode)
	}, wait, tick, "metrics served to an authorised scraper")

	// Events recorded on the resources, and by leader election.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		evs := &eventsv1.EventList{}
		require.NoError(c, cp.Client.List(ctx, evs, client.InNamespace(ns)))
		kinds := map[string]bool{}
		for _, e := range evs.Items {
			kinds[e.Regarding.Kind] = true
		}
		for _, k := range []string{"Provider", "Pipeline", "Experiment", "RunSchedule", "Run"} {
			assert.True(c, kinds[k], "an Event on a %s", k)
		}
		core := &corev1.EventList{}
		require.NoError(c, cp.Client.List(ctx, core, client.InNamespace("kfp-tekton-operator")))
		leader := false
		for _, e := range core.Items {
			leader = leader || e.Reason == "LeaderElection"
		}
		assert.True(c, leader, "leader election's Event")
	}, wait, tick)

	// The lease is renewed, not only taken.
	require.Eventually(t, func() bool {
		lease := &coordinationv1.Lease{}
		err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "kfp-tekton-operator", Name: "kfp-tekton-operator.pipelines.kubeflow.org"}, lease)
		return err == nil && lease.Spec.RenewTime != nil && lease.Spec.AcquireTime != nil &&
			lease.Spec.RenewTime.After(lease.Spec.AcquireTime.Time)
	}, wait, tick, "leader lease renewed")

	// The Provider goes last, its finalizer removing the shared Tasks.
	gone(p)
	taskList := &tektonv1.TaskList{}
	require.NoError(t, cp.Client.List(ctx, taskList, client.InNamespace(ns)))
	assert.Empty(t, taskList.Items)
}

// The chart's configuration file is what the operator reads: every key
// known (strict), the events settings and sinks where the values put them.
func TestOperatorChartConfigIsTheOperatorsConfig(t *testing.T) {
	rendered := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator",
		"--set", "eventSinks[0].name=serving,eventSinks[0].url=http://updater.serving.svc/events", "--set", "events.tls.secretName=events-tls")
	var cfg operator.Config
	var service bool
	for _, u := range objects(t, rendered) {
		switch {
		case u.GetKind() == "ConfigMap":
			data, _, _ := unstructured.NestedString(u.Object, "data", "config.yaml")
			require.NoError(t, sigsyaml.UnmarshalStrict([]byte(data), &cfg), data)
		case u.GetKind() == "Service" && u.GetName() == "kfp-tekton-operator-events":
			ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
			require.Len(t, ports, 1)
			assert.EqualValues(t, 443, ports[0].(map[string]any)["port"], "TLS: https on 443")
			service = true
		}
	}
	assert.True(t, service, "the events Service")
	assert.Equal(t, []operator.EventSink{{Name: "serving", URL: "http://updater.serving.svc/events"}}, cfg.EventSinks)
	assert.Equal(t, ":8082", cfg.EventsBindAddress)
	assert.Equal(t, operator.DefaultEventsTokenAudience, cfg.EventsTokenAudience)
	assert.Equal(t, "/etc/kfp-tekton-operator-events-tls", cfg.EventsCertDir)
	assert.NoError(t, operator.ValidateEventSinks(cfg.EventSinks))
}

// The chart's default values are the operator's defaults (operator.Default),
// but for what an installation sets on purpose: its helper image (the
// chart's own), leader election (it runs two replicas), the conversion
// webhook it serves and where /events is reached. The binary reads the
// file over its defaults, as here, and runs with what Validate accepts.
func TestOperatorChartDefaultsAreTheOperatorsDefaults(t *testing.T) {
	rendered := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator")
	cfg := operator.Default()
	found := false
	for _, u := range objects(t, rendered) {
		if u.GetKind() == "ConfigMap" {
			data, _, _ := unstructured.NestedString(u.Object, "data", "config.yaml")
			require.NoError(t, sigsyaml.UnmarshalStrict([]byte(data), &cfg), data)
			found = true
		}
	}
	require.True(t, found, "the operator's ConfigMap")
	require.NoError(t, cfg.Validate())

	want := operator.Default()
	assert.NotEmpty(t, cfg.HelperImage, "the chart's image")
	want.HelperImage = cfg.HelperImage
	want.LeaderElection = true
	want.ConversionWebhook.Service, want.ConversionWebhook.Secret, want.ConversionWebhook.CertDir =
		"kfp-tekton-operator-webhook", "kfp-tekton-operator-webhook-cert", "/etc/kfp-tekton-operator-webhook-cert"
	want.ConversionWebhook.FinalizerConfiguration = "kfp-tekton-operator-finalizer"
	want.EventsURL = "http://kfp-tekton-operator-events.kfp-tekton-operator.svc/events"
	assert.Equal(t, want, cfg)
}

// TestTheChartsFinalizerWebhookIsTheOperators: the chart installs the
// mutating webhook internal/finalizerwebhook defines (rules, policies) at
// the path it serves, under the name the operator's RBAC and configuration
// use; disabled, neither the webhook nor the setting is rendered.
func TestTheChartsFinalizerWebhookIsTheOperators(t *testing.T) {
	rendered := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator")
	var found []admissionregistrationv1.MutatingWebhookConfiguration
	for _, u := range objects(t, rendered) {
		if u.GetKind() == "MutatingWebhookConfiguration" {
			var c admissionregistrationv1.MutatingWebhookConfiguration
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c))
			found = append(found, c)
		}
	}
	require.Len(t, found, 1)
	assert.Equal(t, "kfp-tekton-operator-finalizer", found[0].Name)
	want := finalizerwebhook.Webhook(admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "kfp-tekton-operator", Name: "kfp-tekton-operator-webhook",
		Path: ptr.To(finalizerwebhook.Path), Port: ptr.To[int32](443)}})
	assert.Equal(t, []admissionregistrationv1.MutatingWebhook{want}, found[0].Webhooks)
	assert.Contains(t, rendered, "finalizerConfiguration: kfp-tekton-operator-finalizer\n")

	off := helm(t, "template", "op", "config/helm/kfp-tekton-operator", "--namespace", "kfp-tekton-operator", "--set", "finalizerWebhook.enabled=false")
	assert.NotContains(t, off, "MutatingWebhookConfiguration")
	assert.NotContains(t, off, "finalizerConfiguration")
}
