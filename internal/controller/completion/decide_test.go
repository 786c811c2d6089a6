package completion

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func runWith(status corev1.ConditionStatus, reason, message string) *tektonv1.PipelineRun {
	pr := &tektonv1.PipelineRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "run-1"}}
	if status != "" {
		pr.Status.SetCondition(&apis.Condition{Type: apis.ConditionSucceeded, Status: status, Reason: reason, Message: message})
	}
	return pr
}

func TestDecide(t *testing.T) {
	for name, tc := range map[string]struct {
		pr     *tektonv1.PipelineRun
		failed []FailedTask
		done   bool
		state  pipelinesv1beta1.CompletionState
		msg    string
	}{
		"not started": {pr: runWith("", "", "")},
		"running":     {pr: runWith(corev1.ConditionUnknown, "Running", "Tasks Completed: 1")},
		"succeeded": {pr: runWith(corev1.ConditionTrue, "Succeeded", "Tasks Completed: 3 (Failed: 0, Cancelled 0), Skipped: 0"),
			done: true, state: pipelinesv1beta1.CompletionStateSucceeded, msg: "Tasks Completed: 3"},
		"failed task named": {pr: runWith(corev1.ConditionFalse, "Failed", "Tasks Completed: 2 (Failed: 1"),
			failed: []FailedTask{{Name: "train", Message: `"step-main" exited with code 1`}},
			done:   true, state: pipelinesv1beta1.CompletionStateFailed, msg: `task train failed: "step-main" exited with code 1`},
		"cancelled": {pr: runWith(corev1.ConditionFalse, "Cancelled", "PipelineRun was cancelled"),
			done: true, state: pipelinesv1beta1.CompletionStateFailed, msg: "Cancelled: PipelineRun was cancelled"},
		"long message cut": {pr: runWith(corev1.ConditionFalse, "Failed", ""),
			failed: []FailedTask{{Name: "t", Message: strings.Repeat("ż", 3000)}},
			done:   true, state: pipelinesv1beta1.CompletionStateFailed, msg: "…(truncated)"},
	} {
		t.Run(name, func(t *testing.T) {
			v, done := Decide(tc.pr, tc.failed)
			assert.Equal(t, tc.done, done)
			assert.Equal(t, tc.state, v.State)
			assert.Contains(t, v.Message, tc.msg)
			assert.LessOrEqual(t, len(v.Message), maxMessage+len("…(truncated)"))
			assert.True(t, strings.ToValidUTF8(v.Message, "?") == v.Message, "valid UTF-8")
		})
	}
}

func TestTrusted(t *testing.T) {
	pr := runWith(corev1.ConditionTrue, "", "")
	run := &pipelinesv1beta1.Run{}
	run.Status.Provider.ID = "run-1"
	assert.True(t, Trusted(pr, run, "team-a"))
	assert.False(t, Trusted(pr, run, "team-b"), "a PipelineRun outside the provider's workflow namespace")
	assert.False(t, Trusted(pr, run, ""), "provider unknown")
	run.Status.Provider.ID = "run-2"
	assert.False(t, Trusted(pr, run, "team-a"), "not the run the provider reported")
}

func TestExpiry(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC))
	done := &pipelinesv1beta1.Run{}
	done.Status.CompletionState, done.Status.MarkedCompletedAt = pipelinesv1beta1.CompletionStateSucceeded, &at
	due, ok := Expiry(done, time.Hour)
	assert.True(t, ok)
	assert.Equal(t, at.Add(time.Hour), due)
	_, ok = Expiry(done, 0)
	assert.False(t, ok, "off")
	_, ok = Expiry(&pipelinesv1beta1.Run{}, time.Hour)
	assert.False(t, ok, "not completed")
	done.Status.CompletionEvents.Pending = []pipelinesv1beta1.PendingCompletionEvent{{ID: "r", Sinks: []string{"s"}}}
	_, ok = Expiry(done, time.Hour)
	assert.False(t, ok, "its event not delivered yet")
}
