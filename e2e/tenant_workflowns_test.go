//go:build e2e

package e2e

// Issue 25, hole 8: Providers of different teams sharing a workflow
// namespace. A provider service's NetworkPolicy admits the provider steps
// of its own Provider's operation runs only, not another Provider's; and
// with a workflowNamespace the account a Provider's pipeline steps run as
// (parameter pipelineServiceAccount, by default "default") must be marked
// for it, like its own account.
//
// The local cluster's network plugin (CNI bridge) does not enforce
// NetworkPolicies (docs/provider-services.md), so no connection is tried:
// the policies the operator applied are matched against the labels of the
// pods the real Tekton ran, which is what an enforcing plugin would do.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// servicePolicyCallers is, per Provider ("namespace/name"), the selector of
// the pods its provider service's NetworkPolicy admits, as applied in ns.
func servicePolicyCallers(t *testing.T, ns string) map[string]labels.Selector {
	t.Helper()
	var policies networkingv1.NetworkPolicyList
	require.NoError(t, cl.List(context.Background(), &policies, client.InNamespace(ns)))
	callers := map[string]labels.Selector{}
	for _, p := range policies.Items {
		owner := p.Annotations["pipelines.kubeflow.org/provider"]
		if owner == "" {
			continue
		}
		require.Len(t, p.Spec.Ingress, 1, "policy %s", p.Name)
		require.Len(t, p.Spec.Ingress[0].From, 1, "policy %s", p.Name)
		require.Nil(t, p.Spec.Ingress[0].From[0].NamespaceSelector, "policy %s admits its own namespace only", p.Name)
		selector, err := metav1.LabelSelectorAsSelector(p.Spec.Ingress[0].From[0].PodSelector)
		require.NoError(t, err)
		callers[owner] = selector
	}
	return callers
}

// operationPod is the pod the real Tekton ran for pipelineTask in the
// succeeded operation run of kind name (found by Tekton's own labels, not
// by those the policies select on).
func operationPod(t *testing.T, ns, kind, name, pipelineTask string) corev1.Pod {
	t.Helper()
	for _, pr := range runsOf(t, ns, kind, name) {
		if succeededCondition(&pr) != "True" {
			continue
		}
		for _, pod := range podsOf(t, ns, pr.Name) {
			if pod.Labels["tekton.dev/pipelineTask"] == pipelineTask {
				return pod
			}
		}
	}
	t.Fatalf("no pod of task %s in a succeeded run of %s %s/%s", pipelineTask, kind, ns, name)
	return corev1.Pod{}
}

// Two Providers' services in one namespace, as two teams' in a shared
// workflow namespace: each one's policy admits the provider step of its own
// Provider's operations, and neither admits the other's, a compile pod or
// a provider service's own pods.
func TestProviderServiceAdmitsOnlyItsOwnProvidersSteps(t *testing.T) {
	ns := namespace(t, "e2e-service-policy")
	serviceProvider(t, ns) // "kfp", as the chart installs it
	create(t, ns, fmt.Sprintf(`
kind: Provider
metadata: {name: other}
spec:
  serviceImage: %s
  serviceAccount: kfp-provider
  pipelineRootStorage: mem://root
  frameworks: [{name: fixture, image: %s}]
`, images["FIXTURE_PROVIDER_SERVICE_IMAGE"], images["FIXTURE_COMPILER_IMAGE"]))
	waitFor(t, 3*time.Minute, "Provider "+ns+"/other Ready with its service", func() (bool, string) {
		return readyIs(get(t, "Provider", ns, "other"), "True")
	})

	experiments := map[string]string{"kfp": "mine", "other": "theirs"}
	for providerName, experiment := range experiments {
		create(t, ns, fmt.Sprintf("kind: Experiment\nmetadata: {name: %s}\nspec: {provider: %s, description: policy}\n", experiment, providerName))
	}
	fixturePipeline(t, ns, "penguin")
	for _, experiment := range experiments {
		waitFor(t, syncTimeout, "Experiment "+experiment+" created", func() (bool, string) { return synchronised(get(t, "Experiment", ns, experiment)) })
	}
	waitFor(t, syncTimeout, "Pipeline penguin created", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "penguin")) })

	steps := map[string]corev1.Pod{}
	for providerName, experiment := range experiments {
		steps[providerName] = operationPod(t, ns, "Experiment", experiment, "experiment-create")
	}
	compilePod := operationPod(t, ns, "Pipeline", "penguin", "compile")
	var servicePods corev1.PodList
	require.NoError(t, cl.List(context.Background(), &servicePods, client.InNamespace(ns),
		client.MatchingLabels{"app.kubernetes.io/component": "provider-service"}))
	require.GreaterOrEqual(t, len(servicePods.Items), 2, "a pod per provider service")

	callers := servicePolicyCallers(t, ns)
	require.Len(t, callers, 2, "one policy per provider service")
	for policyOf := range experiments {
		selector := callers[ns+"/"+policyOf]
		require.NotNil(t, selector, "the policy of %s", policyOf)
		t.Logf("the service of %s admits %s", policyOf, selector)
		for stepOf, pod := range steps {
			assert.Equal(t, stepOf == policyOf, selector.Matches(labels.Set(pod.Labels)),
				"the service of %s admits the provider step %s, run for %s (its labels: %v)", policyOf, pod.Name, stepOf, pod.Labels)
		}
		assert.False(t, selector.Matches(labels.Set(compilePod.Labels)), "the service of %s admits the compile pod %s (tenant code)", policyOf, compilePod.Name)
		for _, pod := range servicePods.Items {
			assert.False(t, selector.Matches(labels.Set(pod.Labels)), "the service of %s admits the provider-service pod %s", policyOf, pod.Name)
		}
	}
}

// markWorkflowAccount creates a service account in the shared workflow
// namespace, marked for the Providers listed, with no token mounted.
func markWorkflowAccount(t *testing.T, ns, name, providers string) {
	t.Helper()
	automount := false
	require.NoError(t, cl.Create(context.Background(), &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"pipelines.kubeflow.org/providers": providers}},
		AutomountServiceAccountToken: &automount,
	}))
}

// refusedAccount waits until Provider ns/name is refused for an account of
// the workflow namespace, and returns the refusal.
func refusedAccount(t *testing.T, ns, name, account string) string {
	t.Helper()
	var message string
	waitFor(t, 2*time.Minute, "Provider "+ns+"/"+name+" refused for "+account, func() (bool, string) {
		status, reason, msg := condition(get(t, "Provider", ns, name), "Ready")
		message = msg
		return status == "False" && reason == "ServiceAccountNotAllowed" && strings.Contains(msg, account),
			fmt.Sprintf("Ready=%s %s: %s", status, reason, msg)
	})
	return message
}

// With the operator configured with a shared workflowNamespace, a tenant's
// Provider whose pipelineServiceAccount names another team's account there
// is refused, saying which mark to add; its own marked account is accepted;
// without the parameter, "default" (marked for no one) is refused.
func TestWorkflowNamespacePipelineServiceAccountMustBeMarked(t *testing.T) {
	workflows := namespace(t, "e2e-workflows")
	tenant := namespace(t, "e2e-tenant")
	tenantProvider := tenant + "/kfp"
	markWorkflowAccount(t, workflows, "kfp-provider", tenantProvider)
	markWorkflowAccount(t, workflows, "kfp-pipeline-runner", tenantProvider)
	markWorkflowAccount(t, workflows, "team-b-runner", "e2e-team-b/kfp")
	operatorValues(t, "workflowNamespace="+workflows)

	create(t, tenant, fmt.Sprintf(`
kind: Provider
metadata: {name: kfp}
spec:
  image: %s
  serviceAccount: kfp-provider
  parameters: {pipelineServiceAccount: team-b-runner}
  frameworks: [{name: fixture, image: %s}]
`, images["FIXTURE_PROVIDER_IMAGE"], images["FIXTURE_COMPILER_IMAGE"]))
	// Deleted while the operator still serves the workflow namespace, so
	// its shared Tasks there go with it before the operator is restored.
	t.Cleanup(func() {
		remove(t, "Provider", tenant, "kfp")
		waitFor(t, 2*time.Minute, "Provider "+tenantProvider+" gone", func() (bool, string) {
			return get(t, "Provider", tenant, "kfp") == nil, "still there"
		})
	})

	msg := refusedAccount(t, tenant, "kfp", workflows+"/team-b-runner")
	assert.Contains(t, msg, "pipelineServiceAccount", "names the parameter")
	assert.Contains(t, msg, fmt.Sprintf(`pipelines.kubeflow.org/providers: %q`, tenantProvider), "says which mark to add")
	assert.NotContains(t, msg, "e2e-team-b/kfp", "does not reveal the Providers the account is marked for")

	patch(t, "Provider", tenant, "kfp", `{"spec":{"parameters":{"pipelineServiceAccount":"kfp-pipeline-runner"}}}`)
	waitFor(t, 2*time.Minute, "Provider "+tenantProvider+" Ready with its own marked account", func() (bool, string) {
		return readyIs(get(t, "Provider", tenant, "kfp"), "True")
	})
	workflowNamespace, _, _ := unstructured.NestedString(get(t, "Provider", tenant, "kfp").Object, "status", "workflowNamespace")
	assert.Equal(t, workflows, workflowNamespace)

	// A merge patch deletes the key with null.
	patch(t, "Provider", tenant, "kfp", `{"spec":{"parameters":{"pipelineServiceAccount":null}}}`)
	msg = refusedAccount(t, tenant, "kfp", workflows+"/default")
	assert.Contains(t, msg, "while its parameter pipelineServiceAccount is not set")
}
