package inflight

import (
	"maps"
	"math"
	"time"
)

// The bound adapts to Tekton (issue 28). maxOperationsInFlight keeps
// Tekton busy through a burst, but every run in flight also sits in
// Tekton's own first-in-first-out controller queue, so a bound far above
// what Tekton works through at once makes every other tenant's run wait
// behind the burst there, however fair the limiter's own queue is.
//
// How long an operation run spends in Tekton, from its creation to its
// completion, against the fastest recent run of the same operation, says
// how deep that queue is (the time Tekton takes to first reconcile a run
// does not: measured with 1,000 queued, it picked new runs up at once and
// then left them waiting behind the others for their TaskRuns). So, as
// congestion control does with round trips: a run that took more than
// slowdown times the fastest halves the bound, once per generation of runs;
// a run within it raises the bound by one, but only while the bound is
// what limits the Provider (its room is full or resources wait), so a calm
// spell does not leave a high bound for the next burst to fill at once.
// The bound starts at the floor and ends near the knee, where Tekton is
// saturated and its queue short (additive increase, multiplicative
// decrease).

// Operation is what the limiter learns when one of a Provider's operation
// runs ends.
type Operation struct {
	// Name is the operation (e.g. "experiment-create"): each has its own
	// fastest time.
	Name string
	// Created is the run's creation time.
	Created time.Time
	// Took is the run's time in Tekton, creation to completion.
	Took time.Duration
	// Limited: the bound was what limited the Provider when the run ended
	// (its room full, or resources waiting).
	Limited bool
}

// Adaptation is a Provider's bound, when it was last halved, and the fastest
// recent run of each operation.
type Adaptation struct {
	Bound   float64
	LastCut time.Time
	Fastest map[string]Fastest
}

// Fastest is an operation's fastest run seen, and when.
type Fastest struct {
	Took time.Duration
	At   time.Time
}

const (
	// fastestWindow is how long an operation's fastest run stands: a
	// backend that got slower for good is measured again.
	fastestWindow = 10 * time.Minute
	// timeQuantum is the resolution of the times a run's duration comes
	// from (the API's timestamps have whole seconds).
	timeQuantum = time.Second
)

// Adapt is a Provider's adaptation after observing o at now, with limit the
// most operations in flight, floor the fewest the bound goes to, and
// slowdown how many times its fastest recent run an operation may take
// (plus the timestamps' quantum) before the bound is halved.
//
// A slow run halves the bound once per generation of runs: only a run
// created after the last cut can show whether that cut was enough (those
// created before were queued behind the old bound, and say nothing new;
// creation times have whole seconds, so those of the cut's second are
// passed over too).
func Adapt(a Adaptation, o Operation, now time.Time, limit, floor, slowdown int) Adaptation {
	floor = min(floor, limit)
	fastest, known := a.Fastest[o.Name]
	if !known || o.Took < fastest.Took || now.Sub(fastest.At) > fastestWindow {
		fastest = Fastest{Took: o.Took, At: now}
		a.Fastest = maps.Clone(a.Fastest)
		if a.Fastest == nil {
			a.Fastest = map[string]Fastest{}
		}
		a.Fastest[o.Name] = fastest
	}
	if o.Took > time.Duration(slowdown)*fastest.Took+timeQuantum {
		if o.Created.Before(a.LastCut) {
			return a
		}
		a.Bound, a.LastCut = math.Max(float64(floor), math.Floor(a.Bound/2)), now
		return a
	}
	if !o.Limited {
		return a
	}
	// Until the first cut, one more per run within the slowdown (the
	// bound doubles each round of runs, to find the knee soon); after it,
	// one more per round of runs.
	step := 1.0
	if !a.LastCut.IsZero() {
		step = 1 / a.Bound
	}
	a.Bound = math.Min(float64(limit), a.Bound+step)
	return a
}
