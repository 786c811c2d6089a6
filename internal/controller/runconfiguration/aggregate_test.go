package runconfiguration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func ready(s metav1.ConditionStatus, reason, message string, generation int64) *metav1.Condition {
	return &metav1.Condition{Type: pipelinesv1beta1.ConditionReady, Status: s, Reason: reason, Message: message, ObservedGeneration: generation}
}

func TestAggregate(t *testing.T) {
	refused := ready(metav1.ConditionFalse, pipelinesv1beta1.ReasonNamespaceNotAllowed, "provider team-a/kfp does not admit namespace team-b", 1)
	for _, tc := range []struct {
		name     string
		children []child
		ready    metav1.ConditionStatus
		reason   string
		message  []string
		final    bool
	}{{
		name:  "no children: ready",
		ready: metav1.ConditionTrue, reason: pipelinesv1beta1.ReasonSynchronized, message: []string{"2 RunSchedules"}, final: true,
	}, {
		name:     "all children ready: ready",
		children: []child{{"RunSchedule", "a", ready(metav1.ConditionTrue, "Synchronized", "", 2), 2}, {"Run", "b", ready(metav1.ConditionTrue, "Synchronized", "", 1), 1}},
		ready:    metav1.ConditionTrue, reason: pipelinesv1beta1.ReasonSynchronized, final: true,
	}, {
		name:     "a child refused: not ready, naming it and why",
		children: []child{{"RunSchedule", "a", refused, 1}, {"Run", "b", ready(metav1.ConditionTrue, "Synchronized", "", 1), 1}},
		ready:    metav1.ConditionFalse, reason: pipelinesv1beta1.ReasonOwnedResourceNotReady,
		message: []string{"1 of 2 owned resources not Ready", "RunSchedule a: NamespaceNotAllowed: provider team-a/kfp does not admit namespace team-b"}, final: true,
	}, {
		name:     "a refusal outweighs one still in progress",
		children: []child{{"RunSchedule", "a", nil, 1}, {"Run", "b", refused, 1}},
		ready:    metav1.ConditionFalse, reason: pipelinesv1beta1.ReasonOwnedResourceNotReady, message: []string{"Run b: NamespaceNotAllowed"}, final: true,
	}, {
		name:     "a child not yet reported: in progress",
		children: []child{{"RunSchedule", "a", nil, 1}},
		ready:    metav1.ConditionUnknown, reason: pipelinesv1beta1.ReasonProgressing, message: []string{"waiting for RunSchedule a"},
	}, {
		name:     "a child ready for its previous spec: in progress",
		children: []child{{"RunSchedule", "a", ready(metav1.ConditionTrue, "Synchronized", "", 1), 2}},
		ready:    metav1.ConditionUnknown, reason: pipelinesv1beta1.ReasonProgressing,
	}, {
		name: "many refused: the first three named, the rest counted",
		children: []child{{"Run", "r1", refused, 1}, {"Run", "r2", refused, 1}, {"Run", "r3", refused, 1},
			{"Run", "r4", refused, 1}, {"Run", "r5", refused, 1}},
		ready: metav1.ConditionFalse, reason: pipelinesv1beta1.ReasonOwnedResourceNotReady, message: []string{"5 of 5", "and 2 more"}, final: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r, final := aggregate(tc.children, pipelinesv1beta1.StateCreating, "2 RunSchedules for pipeline p:v1")
			assert.Equal(t, tc.ready, r.Ready, r.Message)
			assert.Equal(t, tc.reason, r.Reason)
			for _, m := range tc.message {
				assert.Contains(t, r.Message, m)
			}
			assert.Equal(t, tc.final, final)
		})
	}
}
