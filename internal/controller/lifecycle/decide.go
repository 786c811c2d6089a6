package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
)

// ActionKind is what apply does to the cluster.
type ActionKind int

const (
	// Nothing is no action: only the status (if any) is written.
	Nothing ActionKind = iota
	// StartRun creates the PipelineRun of one operation attempt.
	StartRun
	// Cancel asks Tekton to stop a running PipelineRun.
	Cancel
	// Release removes the finalizer: the resource may go.
	Release
	// CancelAndRelease stops a running PipelineRun and lets the resource go.
	CancelAndRelease
)

// Action is one change decide asks apply to make.
type Action struct {
	Kind ActionKind
	// Op and Version are the operation StartRun starts, at a spec version.
	Op      contract.Operation
	Version string
	// Attempt counts the failed attempts of Op at Version before this one.
	Attempt int
	// Ordinal numbers the resource's runs; it names the run, so a pruned
	// run's name is never taken by a newer one that still exists.
	Ordinal int
	// Run is the run Cancel and CancelAndRelease stop.
	Run *RunRecord
}

// Decision is decide's answer: one action, the complete status the
// resource has when the action is done, and how the reconcile ends.
type Decision struct {
	Action Action
	// Report is the resource's readiness; nil leaves the conditions as they are.
	Report *status.Report
	// Record is the backend object the resource's own runs recorded
	// (status.provider, status.version); nil leaves them as they are.
	Record *BackendRecord
	// Observed: the outcome is final for this generation, so
	// status.observedGeneration may say so. A transient or in-progress
	// outcome keeps the previous one: kstatus reads a new observedGeneration
	// next to Ready as "this is how the new spec went".
	Observed bool
	Outcome  outcome.Outcome
}

// BackendRecord is what a succeeded create or update run recorded.
type BackendRecord struct {
	Provider pipelinesv1beta1.ProviderAndID
	// Version is the version the run synchronised, whole (its version label).
	Version string
	// PipelineVersion is the pipeline version it ran with (Run, RunSchedule).
	PipelineVersion string
}

func report(r status.Report) *status.Report { return &r }

func stalled(reason, message string) Decision {
	return Decision{Report: report(status.Failed(reason, message)), Observed: true, Outcome: outcome.Stall()}
}

// decide is the engine's policy: what to do about a resource, from what
// observe saw, with no I/O.
func decide(o Observation) Decision {
	if o.Deleting {
		return decideDeletion(o)
	}
	return decideSync(o)
}

// decideSync brings the backend to the resource's current spec.
func decideSync(o Observation) Decision {
	key := o.ProviderKey.String()
	claimed := o.Status.Provider
	switch {
	case claimed.ID != "" && claimed.Name != "" && claimed.Name != key:
		return stalled(pipelinesv1beta1.ReasonProviderChanged, fmt.Sprintf(
			"the provider cannot change once synchronised: it was %s and is now %s; delete and recreate the resource to move it",
			claimed.Name, key))
	case o.Provider == nil && o.ProviderKey.Namespace == o.Namespace:
		return stalled(pipelinesv1beta1.ReasonProviderNotFound, fmt.Sprintf("provider %s does not exist", key))
	case o.Provider == nil || !o.Provider.Admits(o.Namespace):
		// Another namespace's Provider: missing and not admitting read the
		// same, so a namespace it does not serve learns nothing of it.
		return stalled(pipelinesv1beta1.ReasonNamespaceNotAllowed, notAdmittedMessage(key, o.Namespace))
	case !providerReady(o.Provider):
		// The Provider watch wakes the resource when that changes.
		state := pipelinesv1beta1.StateCreating
		if claimed.ID != "" {
			state = pipelinesv1beta1.StateUpdating
		}
		return Decision{Report: report(status.Blocked(pipelinesv1beta1.ReasonProviderNotReady, state, notReadyMessage(o.Provider)))}
	case o.VersionErr != nil:
		return stalled(pipelinesv1beta1.ReasonInvalidSpec, o.VersionErr.Error())
	case o.AwaitingCache:
		return Decision{Outcome: outcome.WaitFor(time.Second)}
	}

	runs := runSet(o.Runs)
	if latest := runs.latest(contract.OperationCreate, contract.OperationUpdate); latest != nil && !latest.Done {
		return Decision{Report: report(status.Progressing(operationState(latest.Op), runs.runningMessage(latest)))}
	}
	d := Decision{Record: runs.record()}
	if d.Record == nil && claimed.ID != "" {
		// Only a backend id the resource's own run recorded is trusted, to
		// act on or to call the resource synchronised: anyone who may write
		// the status could have put this one there.
		return stalled(pipelinesv1beta1.ReasonBackendRecordMissing, fmt.Sprintf(
			"status.provider names backend id %q of provider %s, but no PipelineRun of this resource in namespace %s records it (pruned, or the status was written by someone else); the operator trusts only backend objects its own runs created: delete and recreate the resource",
			claimed.ID, key, o.WorkflowNamespace))
	}
	var id, version string
	if d.Record != nil {
		id, version = d.Record.Provider.ID, d.Record.Version
	}
	switch {
	case id != "" && version == o.Version:
		d.Report = report(status.Synced(fmt.Sprintf("version %s synchronised with provider %s (id %s)", o.Version, key, id)))
		d.Observed = true
		return d
	case id != "" && o.Traits.CreateOnly:
		d.Report = report(status.Synced(fmt.Sprintf("created in provider %s (id %s)", key, id)))
		d.Observed = true
		return d
	}
	op := contract.OperationCreate
	if d.Record != nil {
		op = contract.OperationUpdate
	}
	if blocked := pipelineBlocks(o, operationState(op)); blocked != nil {
		blocked.Record = d.Record
		return *blocked
	}
	if o.Resolved != nil && len(o.Resolved.Missing) > 0 {
		return Decision{Record: d.Record, Report: report(status.Blocked(pipelinesv1beta1.ReasonDependencyMissing, operationState(op),
			missingMessage(o.Resolved.Missing)))}
	}
	next := startOrWait(o, runs, op, o.Version)
	next.Record = d.Record
	return next
}

// notAdmittedMessage is what a namespace learns of another namespace's
// Provider key it may not use, whether or not that Provider exists.
func notAdmittedMessage(key, namespace string) string {
	return fmt.Sprintf("provider %s does not exist or does not admit namespace %s: its owners add the namespace to the Provider's spec.allowedNamespaces",
		key, namespace)
}

// decideDeletion deletes the resource from the backend, then lets it go.
func decideDeletion(o Observation) Decision {
	if o.AwaitingCache {
		// A create this controller just started may not be in view yet:
		// releasing now could orphan what it makes in the backend.
		return Decision{Outcome: outcome.WaitFor(time.Second)}
	}
	if o.WorkflowNamespaceTerminating {
		// No delete can run there any more, and the runs recording the
		// backend id go with the namespace: waiting would hold the
		// namespace's deletion forever. (The Tekton provider's backend
		// objects live there and go too; another backend's object is left,
		// which the release Event says.)
		return Decision{Action: Action{Kind: Release}}
	}
	runs := runSet(o.Runs)
	if latest := runs.latest(contract.OperationCreate, contract.OperationUpdate); latest != nil && !latest.Done {
		if o.SkipBackendDeletion {
			// Let it go now, as the annotation asks: stop the pending run
			// rather than wait for it (it may never end).
			return Decision{Action: Action{Kind: CancelAndRelease, Run: latest}}
		}
		d := Decision{Report: report(status.Progressing(pipelinesv1beta1.StateDeleting, fmt.Sprintf(
			"waiting for PipelineRun %s/%s to end before deleting", latest.Namespace, latest.Name)))}
		if o.Traits.CancelOnDelete && !latest.Cancelled {
			d.Action = Action{Kind: Cancel, Run: latest}
		}
		// Otherwise wait for it: its result may be an id the backend now holds.
		return d
	}
	if o.SkipBackendDeletion {
		return Decision{Action: Action{Kind: Release}}
	}
	record := runs.record()
	key := o.ProviderKey.String()
	skipHint := fmt.Sprintf("annotate the resource with %s=true to let it go without deleting it from the backend", pipelinesv1beta1.AnnotationSkipBackendDeletion)
	switch {
	case record == nil && o.Status.Provider.ID != "":
		// Deleting means acting on that id as the Provider's service account:
		// a status anyone with status access can write is not enough.
		return stalled(pipelinesv1beta1.ReasonBackendRecordMissing, fmt.Sprintf(
			"status.provider names backend id %q of provider %s, but no PipelineRun of this resource in namespace %s records it (pruned, or the status was written by someone else); the operator deletes only backend objects its own runs created: delete the object in the backend if it exists, then %s",
			o.Status.Provider.ID, key, o.WorkflowNamespace, skipHint))
	case record == nil:
		return Decision{Action: Action{Kind: Release}} // nothing was created
	case o.Provider == nil:
		// Providers are watched by spec reference; this one may be another.
		d := stalled(pipelinesv1beta1.ReasonProviderNotFound, fmt.Sprintf(
			"cannot delete from the backend: provider %s does not exist. Restore it, or %s", key, skipHint))
		d.Outcome = outcome.WaitFor(o.RetryAfter)
		return d
	case !o.Provider.Admits(o.Namespace):
		return stalled(pipelinesv1beta1.ReasonNamespaceNotAllowed, fmt.Sprintf(
			"cannot delete from the backend: provider %s does not admit namespace %s. Add it to the Provider's spec.allowedNamespaces, or %s",
			key, o.Namespace, skipHint))
	case !providerServesDeletion(o.Provider):
		return Decision{Report: report(status.Blocked(pipelinesv1beta1.ReasonProviderNotReady, pipelinesv1beta1.StateDeleting, notReadyMessage(o.Provider)))}
	}
	if deleted := runs.latest(contract.OperationDelete); deleted != nil {
		switch {
		case !deleted.Done:
			return Decision{Report: report(status.Progressing(pipelinesv1beta1.StateDeleting, runs.runningMessage(deleted)))}
		case deleted.Succeeded:
			return Decision{Action: Action{Kind: Release}}
		}
	}
	d := startOrWait(o, runs, contract.OperationDelete, record.Version)
	d.Record = record // the id the delete acts on
	return d
}

// pipelineBlocks says why the resource's create or update cannot start
// yet for its Pipeline, or nil when it can (or runs no Pipeline). The
// Pipeline watch wakes the resource when that changes.
func pipelineBlocks(o Observation, state pipelinesv1beta1.SynchronizationState) *Decision {
	p := o.Pipeline
	if p == nil {
		return nil
	}
	ref := p.Namespace + "/" + p.Name
	var d Decision
	switch {
	case !p.Found:
		d = stalled(pipelinesv1beta1.ReasonPipelineNotFound, fmt.Sprintf("pipeline %s does not exist", ref))
	case p.ID != "" && p.Provider != o.ProviderKey.String():
		d = stalled(pipelinesv1beta1.ReasonPipelineProviderMismatch, fmt.Sprintf(
			"pipeline %s is synchronised with provider %s, not %s: a run needs the pipeline in its own provider's backend",
			ref, p.Provider, o.ProviderKey))
	case p.ID == "" || (p.Floating && !p.Ready) || p.Version == "":
		// A pinned version the backend already holds may run while the
		// Pipeline compiles a newer one; the newest must be synchronised.
		msg := fmt.Sprintf("waiting for pipeline %s to be synchronised", ref)
		if p.Why != "" {
			msg += " (" + p.Why + ")"
		}
		d = Decision{Report: report(status.Blocked(pipelinesv1beta1.ReasonPipelineNotReady, state, msg))}
	default:
		return nil
	}
	return &d
}

// startOrWait starts op at version, or waits out the backoff after its
// last failed attempt.
func startOrWait(o Observation, runs runSet, op contract.Operation, version string) Decision {
	failures := runs.failed(op, version)
	previous := ""
	if n := len(failures); n > 0 {
		last := failures[n-1]
		previous = last.Failure
		if wait := o.Backoff.after(n) - o.Now.Sub(last.FinishedAt); wait > 0 {
			return Decision{
				Report: report(status.Failed(pipelinesv1beta1.ReasonPipelineRunFailed,
					fmt.Sprintf("%s (attempt %d; retrying in %s)", previous, n, wait.Round(100*time.Millisecond)))),
				Outcome: outcome.WaitFor(wait),
			}
		}
	}
	if !o.HelperConfigured {
		return stalled(pipelinesv1beta1.ReasonOperatorMisconfigured, "the operator has no helperImage configured")
	}
	action := Action{Kind: StartRun, Op: op, Version: version, Attempt: len(failures), Ordinal: runs.nextOrdinal()}
	started := RunRecord{Namespace: o.WorkflowNamespace, Name: RunName(o.Traits.Name, o.Subject, op, version, action.Ordinal),
		Op: op, Version: version}
	state := operationState(op)
	return Decision{Action: action, Report: report(status.Progressing(state, runningMessage(&started, len(failures), previous)))}
}

// queuedRecheck bounds how long a queued resource waits if a wake-up is
// lost (the limiter wakes it when it has room, see internal/controller/inflight);
// long, so that thousands waiting cost few reconciles.
const queuedRecheck = 5 * time.Minute

// waitForRoom is d when the run it starts must wait for room among its
// Provider's limit of operations in flight. The message is the same at
// every look, so waiting writes nothing.
func waitForRoom(o Observation, d Decision, limit int) Decision {
	op := d.Action.Op
	d.Action = Action{}
	d.Report = report(status.Blocked(pipelinesv1beta1.ReasonQueued, operationState(op), fmt.Sprintf(
		"queued: provider %s has as many operations in flight as it may have now (maxOperationsInFlight, %d, fewer while its runs are slow in Tekton: operationSlowdownLimit); this %s starts when one of them ends and its turn comes (the namespaces waiting take turns, and the kinds waiting within each; first in first out within a namespace and kind)",
		o.ProviderKey, limit, op)))
	d.Observed = false
	d.Outcome = outcome.WaitFor(queuedRecheck)
	return d
}

// notStarted is the decision when apply could not start the run d asked
// for: the error says whether anything but a changed spec can help.
func notStarted(o Observation, d Decision, err error) Decision {
	var (
		prob     *problem
		spec     *specError
		refusal  *createRefusal
		internal *internalError
	)
	d.Action = Action{}
	switch {
	case errors.As(err, &prob):
		// ConfigMaps are not watched: look again later.
		d.Report, d.Observed, d.Outcome = report(status.Failed(prob.reason, prob.message)), false, outcome.WaitFor(o.RetryAfter)
	case errors.As(err, &spec):
		d = stalled(pipelinesv1beta1.ReasonInvalidSpec, spec.Error())
	case errors.As(err, &refusal) && apierrors.IsAlreadyExists(refusal.err):
		// A run not made for this resource holds the name; it is not in the
		// operator's cache, so no event says when it goes: look again.
		d.Report, d.Observed, d.Outcome = report(status.Failed(pipelinesv1beta1.ReasonPipelineRunNotCreated, refusal.Error())), false, outcome.WaitFor(o.RetryAfter)
	case errors.As(err, &refusal) && refusal.permanent():
		// The same PipelineRun would be refused again: only a new spec helps.
		d = stalled(pipelinesv1beta1.ReasonPipelineRunNotCreated, refusal.Error())
	case errors.As(err, &refusal):
		d.Report, d.Observed, d.Outcome = report(status.Failed(pipelinesv1beta1.ReasonPipelineRunNotCreated, refusal.Error())), false, outcome.Retry(err)
	case errors.As(err, &internal):
		d = stalled(pipelinesv1beta1.ReasonInternalError, internal.Error())
	default:
		d.Report, d.Observed, d.Outcome = nil, false, outcome.Retry(err)
	}
	return d
}

// problem is a reason the resource cannot be synchronised now, found while
// preparing its run (a malformed artifact repository).
type problem struct {
	reason  string
	message string
}

func (p *problem) Error() string { return p.reason + ": " + p.message }

// specError: the resource's spec cannot be served as written.
type specError struct{ err error }

func (e *specError) Error() string { return e.err.Error() }
func (e *specError) Unwrap() error { return e.err }

// internalError: the operator failed to build what it needs, a bug.
type internalError struct{ err error }

func (e *internalError) Error() string {
	return fmt.Sprintf("the operator could not build the operation's PipelineRun (a bug; please report it): %v", e.err)
}
func (e *internalError) Unwrap() error { return e.err }

// createRefusal: the API server refused the run.
type createRefusal struct {
	namespace, name string
	err             error
}

func (e *createRefusal) Error() string {
	return fmt.Sprintf("the API server refused PipelineRun %s/%s: %v", e.namespace, e.name, e.err)
}
func (e *createRefusal) Unwrap() error { return e.err }

// permanent: the same request would be refused again (too large, invalid).
func (e *createRefusal) permanent() bool {
	return apierrors.IsInvalid(e.err) || apierrors.IsRequestEntityTooLargeError(e.err) ||
		strings.Contains(e.err.Error(), "request is too large")
}

// operationState is the Synchronized state while op runs.
func operationState(op contract.Operation) pipelinesv1beta1.SynchronizationState {
	switch op {
	case contract.OperationUpdate:
		return pipelinesv1beta1.StateUpdating
	case contract.OperationDelete:
		return pipelinesv1beta1.StateDeleting
	}
	return pipelinesv1beta1.StateCreating
}
