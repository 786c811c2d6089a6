package provider

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func TestServiceReadiness(t *testing.T) {
	deployment := func(gen, observed int64, replicas, updated, available int32, conditions ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "kfp-svc", Generation: gen},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
				AvailableReplicas: available, Conditions: conditions}}
	}
	for name, tc := range map[string]struct {
		d       *appsv1.Deployment
		waiting string
		ready   bool
		says    string
	}{
		"available":             {d: deployment(2, 2, 1, 1, 1), ready: true},
		"not observed yet":      {d: deployment(2, 1, 1, 1, 1), says: "1 of 1"},
		"old pod still serving": {d: deployment(2, 2, 2, 1, 1), says: "1 of 1 replicas of the current spec"},
		"new pod not available": {d: deployment(2, 2, 1, 1, 0), waiting: "container x: ErrImagePull: nope", says: "0 of 1 replicas of the current spec available; container x: ErrImagePull: nope"},
		"pods refused":          {d: deployment(1, 1, 0, 0, 0, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "exceeded quota"}), says: "FailedCreate: exceeded quota"},
		"progress deadline":     {d: deployment(1, 1, 1, 1, 0, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "too slow"}), says: "ProgressDeadlineExceeded: too slow"},
	} {
		ready, why := serviceReadiness(tc.d, tc.waiting)
		assert.Equal(t, tc.ready, ready, name)
		if !tc.ready {
			assert.Contains(t, why, "provider service Deployment team/kfp-svc: ", name)
			assert.Contains(t, why, tc.says, name)
		}
	}
}

func TestPodWaiting(t *testing.T) {
	pod := func(statuses ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: statuses}}
	}
	waiting := func(reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "provider-service", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}}}
	}
	assert.Equal(t, "container provider-service of pod p: CrashLoopBackOff: m", podWaiting([]corev1.Pod{pod(waiting("CrashLoopBackOff"))}))
	assert.Empty(t, podWaiting([]corev1.Pod{pod(waiting("ContainerCreating"))}), "not a problem yet")
	running := corev1.ContainerStatus{Name: "provider-service", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	assert.Contains(t, podWaiting([]corev1.Pod{pod(running)}), "runs but is not ready (GET /readyz on port 8080)")
	unscheduled := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes"}}}}
	assert.Equal(t, "pod p not scheduled: 0/1 nodes", podWaiting([]corev1.Pod{unscheduled}))
}

func TestJSONText(t *testing.T) {
	for raw, want := range map[string]string{`"kubeflow"`: "kubeflow", `3`: "3", `true`: "true", `{"a":1}`: `{"a":1}`, `"a\"$$b"`: `a"$$b`} {
		assert.Equal(t, want, jsonText([]byte(raw)), raw)
	}
}

func TestServiceNamesAreDNSLabelsPerProvider(t *testing.T) {
	long := strings.Repeat("a.b-", 60) + "z"
	names := map[string]bool{}
	for _, p := range []*pipelinesv1beta1.Provider{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "kfp"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "vertex.ai"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: long}},
	} {
		n := serviceName(p)
		assert.Empty(t, validation.IsDNS1035Label(n), n)
		names[n] = true
	}
	assert.Len(t, names, 4, "one per Provider, also in a shared workflow namespace")
}
