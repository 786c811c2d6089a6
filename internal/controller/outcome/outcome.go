// Package outcome says how a reconcile ended, so that every controller
// requeues the same way for the same kind of ending.
package outcome

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Class is the kind of ending.
type Class int

const (
	// Done is nothing to do until something watched changes (the resource, a
	// PipelineRun of it, its Provider).
	Done Class = iota
	// Waiting is to look again at a known time (a retry's backoff, an object
	// the operator does not watch).
	Waiting
	// Stalled is a resource that cannot progress until its spec or a watched
	// object changes; its Ready condition says why. Never requeued: polling
	// cannot fix it and a watch wakes it.
	Stalled
	// Transient is an error a retry may fix (a conflict, an unreachable API
	// server); the queue retries with its own backoff.
	Transient
)

// Outcome is how one reconcile ended.
type Outcome struct {
	Class Class
	// After is how long a Waiting outcome waits.
	After time.Duration
	// Err is a Transient outcome's error.
	Err error
}

// DoneOutcome builds a Done outcome.
func DoneOutcome() Outcome { return Outcome{Class: Done} }

// WaitFor builds a Waiting outcome that waits d.
func WaitFor(d time.Duration) Outcome { return Outcome{Class: Waiting, After: d} }

// Stall builds a Stalled outcome.
func Stall() Outcome { return Outcome{Class: Stalled} }

// Retry builds a Transient outcome of err.
func Retry(err error) Outcome { return Outcome{Class: Transient, Err: err} }

// DoneOr is Done when err is nil, else Retry(err): the ending of a step
// whose only failure is one a retry may fix.
func DoneOr(err error) Outcome {
	if err != nil {
		return Retry(err)
	}
	return DoneOutcome()
}

func (o Outcome) String() string {
	return [...]string{"done", "waiting", "stalled", "transient"}[o.Class]
}

// Is says whether o is of class c.
func (o Outcome) Is(c Class) bool { return o.Class == c }

// Result is what controller-runtime needs to requeue as the outcome says.
func (o Outcome) Result() (ctrl.Result, error) {
	switch o.Class {
	case Waiting:
		return ctrl.Result{RequeueAfter: o.After}, nil
	case Transient:
		return ctrl.Result{}, o.Err
	}
	return ctrl.Result{}, nil
}
