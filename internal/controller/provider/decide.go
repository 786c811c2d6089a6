package provider

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

// step is what a plan does with one thing the operator keeps for a Provider.
type step int

const (
	// leave it as it is.
	leave step = iota
	// put it in place (apply, add).
	put
	// drop it (delete, remove).
	drop
)

// plan is what one reconcile changes, in apply's order: the finalizer
// added, the shared Tasks, the provider service, the finalizer removed,
// then the status.
type plan struct {
	finalizer step
	tasks     step
	service   step
	// inUse: the Provider is being deleted while still referenced; its
	// status says by whom, and nothing else changes.
	inUse bool
	// report: the status and the ending follow from the observation and
	// what the steps did (conclude).
	report bool
}

// applied is what applying a plan's steps found out.
type applied struct {
	tasksErr error
	// A provider service: its URL, why it is not ready, or why it could
	// not be applied.
	serviceURL      string
	serviceNotReady string
	serviceErr      error
}

// decide is what to change for the observation.
func decide(o observation) plan {
	if !o.provider.DeletionTimestamp.IsZero() {
		return decideDeletion(o)
	}
	pl := plan{tasks: put, report: true}
	if !o.hasFinalizer {
		pl.finalizer = put
	}
	switch {
	case o.provider.Spec.ServiceImage == "":
		// Not (or no longer) a service: one applied before goes.
		pl.service = drop
	case errors.Is(o.serviceAccountErr, errServiceAccountNotAllowed):
		// No longer allowed to run as that account: stop running as it.
		pl.service = drop
	case o.imageErr == nil && o.serviceAccountErr == nil && o.podTemplateErr == nil:
		// Applied over the shared Tasks only (apply skips it when they
		// failed).
		pl.service = put
	default:
		// An unresolved image or account, or refused pod settings, leave a
		// service applied before as it was (its own were admitted), no
		// longer called (no serviceURL).
		pl.service = leave
	}
	return pl
}

// decideDeletion keeps a Provider being deleted while resources still
// reference it (they need it, and its shared Tasks, to delete their
// backend objects), saying so; then removes its service and, when it is
// the last Provider using its workflow namespace, the shared Tasks, and
// lets it go. A terminating namespace takes them along, and the operator's
// rights there: removing them would fail forever.
func decideDeletion(o observation) plan {
	switch {
	case !o.hasFinalizer:
		return plan{}
	case len(o.users) > 0:
		return plan{inUse: true}
	case o.namespaceTerminating:
		return plan{finalizer: drop}
	}
	pl := plan{service: drop, finalizer: drop}
	if o.otherProviders == 0 {
		pl.tasks = drop
	}
	return pl
}

// conclude is the status of a live Provider after its plan was applied,
// and how its reconcile ends.
func conclude(o observation, a applied) (pipelinesv1beta1.ProviderStatus, outcome.Outcome) {
	return desiredStatus(o, a), ending(o, a)
}

// ending is how a live Provider's reconcile ends. What the operator does
// not watch (service accounts, image registries, Tekton's flags, a missing
// namespace) is read again after retryAfter; a spec the operator refuses
// waits for its change.
func ending(o observation, a applied) outcome.Outcome {
	invalidImage := errors.Is(o.imageErr, imageref.ErrInvalidReference)
	switch {
	case a.tasksErr != nil && !apierrors.IsNotFound(a.tasksErr):
		return outcome.Retry(a.tasksErr)
	case a.tasksErr != nil, o.serviceAccountErr != nil, o.imageErr != nil && !invalidImage,
		o.podSecurity != "", a.serviceErr != nil, a.serviceNotReady != "":
		return outcome.WaitFor(o.retryAfter)
	case o.sharedAccount:
		// Service accounts are not watched (that would mean reading every
		// account of the shared namespace): a mark the platform engineer
		// removes is found at the next check, within RetryAfter.
		return outcome.WaitFor(o.retryAfter)
	case invalidImage, o.podTemplateErr != nil:
		return outcome.Stall()
	}
	return outcome.DoneOutcome()
}
