// Package completion sets a Run's status.completionState (and
// completionMessage) when the PipelineRun the Tekton provider started for
// it ends. It watches, through the operator's label-filtered cache, the
// PipelineRuns labelled app.kubernetes.io/managed-by=kfp-tekton-provider,
// and trusts one only when it is where the Run's provider runs its
// workflows and is the run the provider reported for the Run
// (status.provider.id): a tenant who can create PipelineRuns elsewhere
// cannot complete another namespace's Run.
package completion

import (
	"fmt"
	"slices"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"knative.dev/pkg/apis"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Verdict is what a finished PipelineRun means for its Run.
type Verdict struct {
	State   pipelinesv1beta1.CompletionState
	Message string
}

// FailedTask is a task of the run that failed, as its TaskRun says.
type FailedTask struct {
	Name    string // the pipeline task's name
	Message string
}

// Decide returns the Run's completion from its PipelineRun, or false while
// the PipelineRun has not ended.
func Decide(pr *tektonv1.PipelineRun, failed []FailedTask) (Verdict, bool) {
	c := pr.Status.GetCondition(apis.ConditionSucceeded)
	if c == nil || c.Status == corev1.ConditionUnknown {
		return Verdict{}, false
	}
	if c.Status == corev1.ConditionTrue {
		return Verdict{State: pipelinesv1beta1.CompletionStateSucceeded, Message: c.Message}, true
	}
	msg := c.Reason + ": " + c.Message
	if len(failed) > 0 {
		var parts []string
		for _, f := range failed {
			parts = append(parts, fmt.Sprintf("task %s failed: %s", f.Name, f.Message))
		}
		msg = strings.Join(parts, "; ")
	}
	return Verdict{State: pipelinesv1beta1.CompletionStateFailed, Message: truncate(msg, maxMessage)}, true
}

// maxMessage bounds completionMessage (TaskRun messages quote step output).
const maxMessage = 2048

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…(truncated)"
}

// Trusted says whether pr may complete run: it must be in the namespace
// where the run's provider runs workflows, and be the run the provider
// reported creating for it.
func Trusted(pr *tektonv1.PipelineRun, run *pipelinesv1beta1.Run, workflowNamespace string) bool {
	return workflowNamespace != "" && pr.Namespace == workflowNamespace && run.Status.Provider.ID == pr.Name
}

// AlreadyRecorded says whether rc already holds the run providerID: as its
// latest succeeded run, or as an event queued or published. Nothing about
// it needs reading again.
func AlreadyRecorded(rc *pipelinesv1beta1.RunConfiguration, providerID string) bool {
	if s := rc.Status.LatestRuns.Succeeded; s != nil && s.ProviderID == providerID {
		return true
	}
	box := rc.Status.CompletionEvents
	return slices.Contains(box.Published, providerID) ||
		slices.ContainsFunc(box.Pending, func(p pipelinesv1beta1.PendingCompletionEvent) bool { return p.ID == providerID })
}
