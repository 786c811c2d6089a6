package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/types"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// RunRecord is what decide needs to know of one of a resource's
// PipelineRuns.
type RunRecord struct {
	Namespace, Name string
	// UID is the run's, so pruning deletes this run and never a namesake.
	UID types.UID
	Op  contract.Operation
	// Version is the spec version the run is for, whole (its version label).
	Version string
	Ordinal int
	Done    bool
	// Succeeded: done, no provider error, and (for create and update) an id.
	Succeeded bool
	Cancelled bool
	// ID is the backend id a create or update reported.
	ID string
	// Provider is "namespace/name" of the Provider the run was made for.
	Provider string
	// PipelineVersion is the pipeline version a Run or RunSchedule
	// operation ran with.
	PipelineVersion string
	FinishedAt      time.Time
	// Failure says why a failed run failed; set on the newest failed run of
	// each operation and version (the only ones decide reports).
	Failure string
}

// runSet is a resource's runs, oldest first.
type runSet []*RunRecord

// recordOf summarises pr.
func recordOf(pr *tektonv1.PipelineRun) *RunRecord {
	rec := &RunRecord{
		Namespace: pr.Namespace, Name: pr.Name, UID: pr.UID,
		Op: contract.Operation(pr.Labels[contract.LabelOperation]), Version: pr.Labels[contract.LabelVersion],
		Done:      pr.IsDone(),
		Succeeded: isSuccess(pr),
		Cancelled: pr.Spec.Status == tektonv1.PipelineRunSpecStatusCancelled,
		ID:        result(pr, taskdef.ResultProviderID),
		Provider:  runProvider(pr),

		PipelineVersion: pr.Annotations[contract.AnnotationPipelineVersion],
	}
	rec.Ordinal, _ = strconv.Atoi(pr.Annotations[contract.AnnotationOrdinal])
	if rec.Done {
		rec.FinishedAt = finishedAt(pr)
	}
	return rec
}

// createdAt is when the controller built the run. The API server's
// creationTimestamp has whole seconds, too coarse to order a retry after the
// failure it follows.
func createdAt(pr *tektonv1.PipelineRun) time.Time {
	if t, err := time.Parse(contract.CreatedAtLayout, pr.Annotations[contract.AnnotationCreatedAt]); err == nil {
		return t
	}
	return pr.CreationTimestamp.Time
}

// latest is the newest run of one of ops.
func (s runSet) latest(ops ...contract.Operation) *RunRecord {
	for i := len(s) - 1; i >= 0; i-- {
		if slices.Contains(ops, s[i].Op) {
			return s[i]
		}
	}
	return nil
}

// record is the backend object the newest succeeded create or update
// recorded, nil when none did.
func (s runSet) record() *BackendRecord {
	for i := len(s) - 1; i >= 0; i-- {
		if r := s[i]; (r.Op == contract.OperationCreate || r.Op == contract.OperationUpdate) && r.Succeeded {
			return &BackendRecord{Provider: pipelinesv1beta1.ProviderAndID{Name: r.Provider, ID: r.ID}, Version: r.Version,
				PipelineVersion: r.PipelineVersion}
		}
	}
	return nil
}

// failed are the finished, unsuccessful runs of op at version, oldest first.
func (s runSet) failed(op contract.Operation, version string) runSet {
	var out runSet
	for _, r := range s {
		if r.Op == op && r.Version == version && r.Done && !r.Succeeded {
			out = append(out, r)
		}
	}
	return out
}

// nextOrdinal numbers a new run past every run there is. A pruned newest
// run's number may come again, but its name is free by then; counting runs
// instead would take the name of one that still exists.
func (s runSet) nextOrdinal() int {
	n := 0
	for _, r := range s {
		n = max(n, r.Ordinal)
	}
	return n + 1
}

// runningMessage reports run in progress, with why the attempt before it
// failed, if one did.
func (s runSet) runningMessage(run *RunRecord) string {
	failures := s.failed(run.Op, run.Version)
	previous := ""
	if len(failures) > 0 {
		previous = failures[len(failures)-1].Failure
	}
	return runningMessage(run, len(failures), previous)
}

// runningMessage is the same whether the run was just created or is seen
// running later, so the reconcile its creation triggers writes nothing.
func runningMessage(run *RunRecord, failures int, previous string) string {
	msg := fmt.Sprintf("PipelineRun %s/%s is running (version %s)", run.Namespace, run.Name, run.Version)
	if failures > 0 {
		msg += fmt.Sprintf(" (attempt %d; the previous one: %s)", failures+1, previous)
	}
	return msg
}

// isSuccess: the run succeeded, the provider reported no error, and a
// create or update reported the backend id (without one the resource would
// be created again).
func isSuccess(pr *tektonv1.PipelineRun) bool {
	c := pr.Status.GetCondition(apis.ConditionSucceeded)
	return c != nil && c.IsTrue() && result(pr, taskdef.ResultProviderError) == "" &&
		(contract.Operation(pr.Labels[contract.LabelOperation]) == contract.OperationDelete || result(pr, taskdef.ResultProviderID) != "")
}

// runProvider is "namespace/name" of the provider a run was made for.
func runProvider(pr *tektonv1.PipelineRun) string {
	if p := pr.Annotations[contract.AnnotationProvider]; p != "" {
		return p
	}
	return pr.Labels[contract.LabelProviderNS] + "/" + pr.Labels[contract.LabelProvider]
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
