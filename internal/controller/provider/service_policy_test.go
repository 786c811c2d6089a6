package provider

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// tektonPodLabels are the labels Tekton gives the pod of task in a
// PipelineRun labelled runLabels: the Task's, the run's over them, then
// Tekton's own (its managed-by over ours).
func tektonPodLabels(task *tektonv1.Task, runLabels map[string]string) labels.Set {
	pod := labels.Set{}
	for k, v := range task.Labels {
		pod[k] = v
	}
	for k, v := range runLabels {
		pod[k] = v
	}
	pod["tekton.dev/task"], pod["tekton.dev/pipelineTask"] = task.Name, task.Name
	// Tekton claims its pods as its own, whatever the run says (seen on the
	// real node: the e2e TestProviderServiceAdmitsOnlyItsOwnProvidersSteps).
	pod["app.kubernetes.io/managed-by"] = "tekton-pipelines"
	return pod
}

// operationRunLabels are the provider labels of an operation run for p as
// the lifecycle engine writes them (runLabels), beside some of the others.
// They are written out here because the engine's are unexported; the
// envtest TestAProviderServiceAdmitsOnlyItsOwnProvidersCallers checks the
// policy against the engine's real runs.
func operationRunLabels(p *pipelinesv1beta1.Provider) map[string]string {
	return map[string]string{
		contract.LabelManagedBy:      contract.ManagedByOperator,
		contract.LabelOwnerKind:      "experiment",
		contract.LabelOwnerNamespace: "team-c",
		contract.LabelProvider:       naming.LabelValue(p.Name),
		contract.LabelProviderNS:     p.Namespace,
	}
}

func callersSelector(t *testing.T, p *pipelinesv1beta1.Provider) labels.Selector {
	t.Helper()
	_, _, policy := serviceObjects(p, "workflows", "example.com/svc@sha256:0", ServiceSettings{})
	require.Len(t, policy.Spec.Ingress, 1)
	require.Len(t, policy.Spec.Ingress[0].From, 1)
	assert.Nil(t, policy.Spec.Ingress[0].From[0].NamespaceSelector, "its own namespace only")
	selector, err := metav1.LabelSelectorAsSelector(policy.Spec.Ingress[0].From[0].PodSelector)
	require.NoError(t, err)
	return selector
}

// Providers sharing a workflow namespace: each one's service admits the
// provider steps of its own operations only, never another Provider's,
// nor a compile pod, nor a provider service's own pods.
func TestServicePolicyAdmitsOnlyItsOwnProvidersSteps(t *testing.T) {
	long := strings.Repeat("provider.", 27) // 243 characters, shortened with a hash in labels
	providers := []*pipelinesv1beta1.Provider{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "vai"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "kfp"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: long + "one"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: long + "two"}},
	}
	var compile *tektonv1.Task
	for _, task := range taskdef.Tasks() {
		if task.Name == taskdef.CompileTaskName {
			compile = task
		}
	}
	require.NotNil(t, compile)

	for _, p := range providers {
		callers := callersSelector(t, p)
		for key, value := range providerCallers(p) {
			assert.Empty(t, validation.IsQualifiedName(key), key)
			assert.Empty(t, validation.IsValidLabelValue(value), "%s=%s", key, value)
		}
		for _, q := range providers {
			for _, task := range taskdef.Tasks() {
				pod := tektonPodLabels(task, operationRunLabels(q))
				admitted := p == q && task.Name != taskdef.CompileTaskName
				assert.Equal(t, admitted, callers.Matches(pod), "the service of %s/%s admits the pod of %s for %s/%s",
					p.Namespace, p.Name, task.Name, q.Namespace, q.Name)
			}
			assert.False(t, callers.Matches(labels.Set(serviceLabels(q))), "a provider service's own pods are no callers")
		}
		assert.False(t, callers.Matches(labels.Set(taskdef.ProviderCallers())),
			"a provider-calling pod of no operation run (a Task run by hand) is not admitted")
	}
}
