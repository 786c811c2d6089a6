package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// runSet is a resource's PipelineRuns, oldest first.
type runSet []*tektonv1.PipelineRun

// runsOf lists obj's PipelineRuns from the cache, by the owner UID index.
func (r *Reconciler[T]) runsOf(ctx context.Context, obj Subject, p *pipelinesv1beta1.Provider) (runSet, error) {
	list := &tektonv1.PipelineRunList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.workflowNamespace(p)),
		client.MatchingFields{IndexOwnerUID: string(obj.GetUID())}); err != nil {
		return nil, fmt.Errorf("listing PipelineRuns of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	runs := make(runSet, len(list.Items))
	for i := range list.Items {
		runs[i] = &list.Items[i]
	}
	sort.SliceStable(runs, func(i, j int) bool { return createdAt(runs[i]).Before(createdAt(runs[j])) })
	return runs, nil
}

// createdAt is when the controller built the run. The API server's
// creationTimestamp has whole seconds, too coarse to order a retry after the
// failure it follows.
func createdAt(pr *tektonv1.PipelineRun) time.Time {
	if t, err := time.Parse(CreatedAtLayout, pr.Annotations[AnnotationCreatedAt]); err == nil {
		return t
	}
	return pr.CreationTimestamp.Time
}

// latest is the newest run of one of ops.
func (s runSet) latest(ops ...string) *tektonv1.PipelineRun {
	for i := len(s) - 1; i >= 0; i-- {
		for _, op := range ops {
			if s[i].Labels[LabelOperation] == op {
				return s[i]
			}
		}
	}
	return nil
}

// failed are the finished, unsuccessful runs of op at a version (as its
// label holds it), oldest first.
func (s runSet) failed(op, versionLabel string) runSet {
	var out runSet
	for _, pr := range s {
		if pr.Labels[LabelOperation] == op && pr.Labels[LabelVersion] == versionLabel && pr.IsDone() && !isSuccess(pr) {
			out = append(out, pr)
		}
	}
	return out
}

// succeeded returns the backend id of a run that succeeded without a
// provider error.
func succeeded(pr *tektonv1.PipelineRun) (string, bool) {
	if !isSuccess(pr) {
		return "", false
	}
	return result(pr, taskdef.ResultProviderID), true
}

// isSuccess: the run succeeded, the provider reported no error, and a
// create or update reported the backend id (without one the resource would
// be created again).
func isSuccess(pr *tektonv1.PipelineRun) bool {
	c := pr.Status.GetCondition(apis.ConditionSucceeded)
	return c != nil && c.IsTrue() && result(pr, taskdef.ResultProviderError) == "" &&
		(pr.Labels[LabelOperation] == OpDelete || result(pr, taskdef.ResultProviderID) != "")
}

// count is how many runs of op there are.
func (s runSet) count(op string) int {
	n := 0
	for _, pr := range s {
		if pr.Labels[LabelOperation] == op {
			n++
		}
	}
	return n
}

// contains says whether a run of that name is in the set.
func (s runSet) contains(name string) bool {
	for _, pr := range s {
		if pr.Name == name {
			return true
		}
	}
	return false
}

// runProvider is "namespace/name" of the provider a run was made for.
func runProvider(pr *tektonv1.PipelineRun) string {
	if p := pr.Annotations[AnnotationProvider]; p != "" {
		return p
	}
	return pr.Labels[LabelProviderNS] + "/" + pr.Labels[LabelProvider]
}

func result(pr *tektonv1.PipelineRun, name string) string {
	for _, res := range pr.Status.Results {
		if res.Name == name {
			return res.Value.StringVal
		}
	}
	return ""
}

func finishedAt(pr *tektonv1.PipelineRun) time.Time {
	if pr.Status.CompletionTime != nil {
		return pr.Status.CompletionTime.Time
	}
	if c := pr.Status.GetCondition(apis.ConditionSucceeded); c != nil {
		return c.LastTransitionTime.Inner.Time
	}
	return pr.CreationTimestamp.Time
}

// failureMessage says why a finished run failed: the provider's own error,
// or which task failed and Tekton's words for it. A finished run does not
// change, so its message is worked out (and its TaskRuns read) once.
func (r *Reconciler[T]) failureMessage(ctx context.Context, pr *tektonv1.PipelineRun) string {
	if msg, ok := r.failures.Load(pr.UID); ok {
		return msg.(string)
	}
	msg := r.explainFailure(ctx, pr)
	if r.failureCount.Add(1) > maxRememberedFailures {
		// Forget everything rather than grow without bound; a forgotten
		// message is only worked out again.
		r.failures.Clear()
		r.failureCount.Store(1)
	}
	r.failures.Store(pr.UID, msg)
	return msg
}

// maxRememberedFailures bounds the failure messages kept (≤ 3 KB each).
const maxRememberedFailures = 10000

func (r *Reconciler[T]) explainFailure(ctx context.Context, pr *tektonv1.PipelineRun) string {
	if msg := result(pr, taskdef.ResultProviderError); msg != "" {
		return fmt.Sprintf("provider error (PipelineRun %s/%s): %s", pr.Namespace, pr.Name, msg)
	}
	if c := pr.Status.GetCondition(apis.ConditionSucceeded); c != nil && c.IsTrue() {
		return fmt.Sprintf("PipelineRun %s/%s succeeded but the provider reported no id", pr.Namespace, pr.Name)
	}
	var why []string
	for _, child := range pr.Status.ChildReferences {
		if child.Kind != "TaskRun" {
			continue
		}
		tr := &tektonv1.TaskRun{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: pr.Namespace, Name: child.Name}, tr); err != nil {
			continue
		}
		// The report step fails the TaskRun after writing the provider's
		// error; Tekton keeps it in the TaskRun's results even when it does
		// not copy it to the failed PipelineRun's.
		for _, res := range tr.Status.Results {
			if res.Name == taskdef.ResultProviderError && res.Value.StringVal != "" {
				return fmt.Sprintf("provider error (PipelineRun %s/%s): %s", pr.Namespace, pr.Name, res.Value.StringVal)
			}
		}
		if c := tr.Status.GetCondition(apis.ConditionSucceeded); c != nil && c.IsFalse() {
			why = append(why, fmt.Sprintf("task %s failed%s: %s", child.PipelineTaskName, stepsNamedIn(tr, c.Message), c.Message))
		}
	}
	c := pr.Status.GetCondition(apis.ConditionSucceeded)
	if len(why) == 0 && c != nil {
		why = append(why, c.Message)
	}
	return fmt.Sprintf("PipelineRun %s/%s failed: %s", pr.Namespace, pr.Name, strings.Join(why, "; "))
}

// stepsNamedIn names the steps whose image Tekton's failure message
// mentions: when an image cannot be found, Tekton names the image (and the
// registry's words) but not always the step that needed it.
func stepsNamedIn(tr *tektonv1.TaskRun, message string) string {
	if tr.Status.TaskSpec == nil {
		return ""
	}
	var steps []string
	for _, step := range tr.Status.TaskSpec.Steps {
		ref, err := name.ParseReference(step.Image)
		if err != nil || !strings.Contains(message, ref.Context().RepositoryStr()) {
			continue
		}
		steps = append(steps, fmt.Sprintf("step %q (image %s)", step.Name, step.Image))
	}
	if len(steps) == 0 {
		return ""
	}
	return " at " + strings.Join(steps, ", ")
}
