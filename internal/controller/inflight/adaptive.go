package inflight

import (
	"math"
	"time"
)

// The bound adapts to Tekton (issue 28). maxOperationsInFlight keeps
// Tekton busy through a burst, but every run in flight also sits in
// Tekton's own first-in-first-out controller queue, so a bound far above
// what Tekton works through at once makes every other tenant's run wait
// behind the burst there, however fair the limiter's own queue is. The
// time Tekton takes to pick a new run up (its status.startTime, set at its
// first reconcile, minus its creation) says how deep that queue is: while
// it exceeds a target the bound is halved, and each run picked up within it
// raises the bound by one, up to the configured limit (additive increase,
// multiplicative decrease; Tekton stays saturated near the knee, where
// half the bound still has more runs in flight than it works through at
// once).

// Pickup is what the limiter learns when Tekton first reconciles one of a
// Provider's operation runs.
type Pickup struct {
	// Created is the run's creation time.
	Created time.Time
	// Wait is how long Tekton took to pick it up.
	Wait time.Duration
}

// Adaptation is a Provider's bound and when it was last halved.
type Adaptation struct {
	Bound   float64
	LastCut time.Time
}

// Adapt is a Provider's adaptation after observing p at now, with limit the most
// operations in flight, floor the fewest the bound goes to, and target the
// longest pickup wait that leaves the bound where it is.
//
// A slow pickup halves the bound once per generation of runs: only a run
// created after the last cut can show whether that cut was enough (those
// created before were queued behind the old bound, and say nothing new;
// creation times have whole seconds, so those of the cut's second are
// passed over too).
func Adapt(a Adaptation, p Pickup, now time.Time, limit, floor int, target time.Duration) Adaptation {
	floor = min(floor, limit)
	if p.Wait > target {
		if p.Created.Before(a.LastCut) {
			return a
		}
		return Adaptation{Bound: math.Max(float64(floor), math.Floor(a.Bound/2)), LastCut: now}
	}
	a.Bound = math.Min(float64(limit), a.Bound+1)
	return a
}
