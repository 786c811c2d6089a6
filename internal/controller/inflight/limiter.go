// Package inflight bounds the operation PipelineRuns each Provider has
// running at once, across every resource kind. A burst of resources (a
// release applying thousands) would otherwise flood Tekton, whose queue
// makes every run wait a pass over all the others between steps: the whole
// burst then finishes together at its end, and any operation timeout shorter
// than that fails all of it. Resources beyond the limit wait in a queue per
// Provider and are woken as runs end, with no polling.
//
// A Provider serves many namespaces, and one team's burst must not make
// everyone else's single operation wait for all of it: room that frees goes
// round-robin to the namespaces waiting, and within a namespace round-robin
// to the kinds waiting (a burst of Runs does not starve its Pipeline);
// within a namespace and kind, waiters go first in, first out (fair.go).
// A namespace that starts waiting has its first waiter admitted after at
// most one admission of each namespace already waiting (and of those woken
// already into room held for them, none while the Provider is full),
// however many each queued. Room is held for the next in turn as it frees,
// so a waiter that finds room but whose turn has not come (or a newcomer)
// does not take it. Each step (queue, admit, forget) is O(1) in the number
// waiting.
package inflight

import (
	"container/list"
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Runs reads what the limiter counts, from the operator's cache.
type Runs interface {
	// Unfinished are the provider's ("namespace/name") operation runs that
	// have not ended.
	Unfinished(ctx context.Context, provider string) ([]types.NamespacedName, error)
	// Ended: run is in the cache, finished.
	Ended(ctx context.Context, run types.NamespacedName) (bool, error)
}

// Waiter is a resource that asked to start an operation.
type Waiter struct {
	// Key names the resource across kinds ("kind/namespace/name").
	Key string
	// Wake enqueues its reconcile; it must not block.
	Wake func()
}

// Limiter admits operations up to Limit in flight per Provider, or fewer
// while Tekton's runs take longer than they can (adaptive.go).
type Limiter struct {
	limit int
	runs  Runs
	now   func() time.Time
	// slowdown is how many times its fastest recent run an operation may
	// take before its Provider's bound is halved; 0 keeps every bound at
	// limit.
	slowdown int

	mu        sync.Mutex
	providers map[string]*providerQueue
	// waiting maps each queued Waiter's key to its place.
	waiting map[string]*entry
}

// providerQueue is one Provider's waiters and its runs being created.
type providerQueue struct {
	// fair holds the waiters no room is held for, in their turns.
	fair fairQueue
	// held are the waiters that room is held for (they were woken to take
	// it), in the order it was: what frees goes to them first, and a
	// newcomer cannot take it.
	held list.List
	// creating are runs admitted and created (or being created) that the
	// cache has not shown yet, until when they stop counting.
	creating map[types.NamespacedName]time.Time
	// adaptation is the Provider's bound, adapted to its runs' times.
	adaptation Adaptation
}

// queued counts the provider's waiters, room held for them or not.
func (q *providerQueue) queued() int { return q.fair.len() + q.held.Len() }

// creationGrace bounds how long an admitted run the cache does not show
// counts (one deleted at once never shows).
const creationGrace = 30 * time.Second

// New is a limiter admitting limit operations in flight per Provider.
func New(limit int, runs Runs, now func() time.Time) *Limiter {
	return &Limiter{limit: limit, runs: runs, now: now,
		providers: map[string]*providerQueue{}, waiting: map[string]*entry{}}
}

// Limit is the operations in flight each Provider may have.
func (l *Limiter) Limit() int { return l.limit }

// BoundFloor is the fewest operations in flight a Provider's adapted bound
// allows (or the limit, if lower).
const BoundFloor = 10

// AdaptToOperations makes each Provider's bound adapt to how long its
// operation runs take in Tekton (adaptive.go): it starts at BoundFloor and
// is halved while a run takes more than slowdown times the fastest recent
// one; call it before the limiter is used. 0 keeps every bound at the limit.
func (l *Limiter) AdaptToOperations(slowdown int) *Limiter {
	l.slowdown = slowdown
	return l
}

// Bound is the operations in flight provider may have now.
func (l *Limiter) Bound(provider string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bound(l.queue(provider))
}

func (l *Limiter) bound(q *providerQueue) int {
	if l.slowdown == 0 {
		return l.limit
	}
	return int(q.adaptation.Bound)
}

// Observe learns that one of provider's operation runs ended (o.Limited is
// worked out here), adapting its bound; waiters that a raised bound has
// room for are woken.
func (l *Limiter) Observe(ctx context.Context, provider string, o Operation) {
	if l.slowdown == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(provider)
	before := l.bound(q)
	inFlight, err := l.inFlight(ctx, provider, q)
	if err != nil {
		return // one observation less
	}
	o.Limited = q.queued() > 0 || inFlight+1 >= before // the ended run no longer counts
	q.adaptation = Adapt(q.adaptation, o, l.now(), l.limit, BoundFloor, l.slowdown)
	after := l.bound(q)
	boundGauge.WithLabelValues(provider).Set(float64(after))
	if after > before {
		l.wake(ctx, provider, q)
	}
}

// Admission is the answer to Acquire.
type Admission struct {
	Admitted bool
	// InFlight counts the provider's operations in flight when asked
	// (the new one not included).
	InFlight int
	// Queued counts the provider's waiters, when not admitted.
	Queued int
	// Held: not admitted, but room is held for the waiter (it is next),
	// which it takes when it asks again with the provider below the limit.
	Held bool
}

// Acquire admits w's operation, whose run will be named run, if the
// provider has room for it that no waiter is owed; else w waits in the
// provider's queue (once, keeping its place) until Wake. Room that frees
// is held for waiters in their fair turns (see the package doc), and a
// waiter is admitted only into room held for it.
// An admitted run counts from now on: Release it if it is not created.
func (l *Limiter) Acquire(ctx context.Context, provider string, w Waiter, run types.NamespacedName) (Admission, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.waiting[w.Key]
	if e != nil && e.provider != provider {
		// Its spec names another Provider now (allowed until it has a
		// backend id): its place in the old queue is someone else's.
		old := l.queue(e.provider)
		l.dequeue(old, e)
		l.wake(ctx, e.provider, old)
		e = nil
	}
	q := l.queue(provider)
	inFlight, err := l.inFlight(ctx, provider, q)
	if err != nil {
		return Admission{}, err
	}
	if e == nil {
		if Admits(l.bound(q), inFlight, q.queued(), false) {
			q.creating[run] = l.now().Add(creationGrace)
			return Admission{Admitted: true, InFlight: inFlight}, nil
		}
		e = newEntry(provider, w)
		q.fair.push(e)
		l.waiting[w.Key] = e
		queuedGauge.WithLabelValues(provider).Set(float64(q.queued()))
	} else {
		e.Wake = w.Wake // the latest reconcile's
	}
	if !e.held {
		// Room no one holds (its wake-up was lost, or it just freed): it
		// goes to the waiters in turn, this one perhaps among them.
		for _, h := range l.hold(q, inFlight) {
			if h != e {
				h.Wake()
			}
		}
	}
	if !Admits(l.bound(q), inFlight, q.queued(), e.held) {
		return Admission{InFlight: inFlight, Queued: q.queued(), Held: e.held}, nil
	}
	l.dequeue(q, e)
	q.creating[run] = l.now().Add(creationGrace)
	return Admission{Admitted: true, InFlight: inFlight}, nil
}

// Release gives back the room of an admitted run that was not created.
func (l *Limiter) Release(ctx context.Context, provider string, run types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(provider)
	delete(q.creating, run)
	l.wake(ctx, provider, q)
}

// Forget takes key out of any queue: its resource is gone or no longer
// needs to start an operation. Room held for it goes to the next in turn.
func (l *Limiter) Forget(ctx context.Context, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.waiting[key]
	if !ok {
		return
	}
	q := l.queue(e.provider)
	l.dequeue(q, e)
	l.wake(ctx, e.provider, q)
}

// Wake wakes the provider's waiters that now have room: call it when one
// of its runs ends or goes.
func (l *Limiter) Wake(ctx context.Context, provider string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.providers[provider]; q != nil && q.queued() > 0 {
		l.wake(ctx, provider, q)
	}
}

// wake holds the room free for the next waiters in turn, and wakes those
// it is held for. Each takes its room in its own reconcile (Acquire), so
// waking one twice is harmless.
func (l *Limiter) wake(ctx context.Context, provider string, q *providerQueue) {
	if q.queued() == 0 {
		return
	}
	inFlight, err := l.inFlight(ctx, provider, q)
	if err != nil {
		return // the waiters' own requeue looks again
	}
	l.hold(q, inFlight)
	n := ToWake(l.bound(q), inFlight, q.held.Len())
	for h := q.held.Front(); h != nil && n > 0; h, n = h.Next(), n-1 {
		h.Value.(*entry).Wake()
	}
}

// hold holds the room that no waiter holds for the next waiters in turn,
// and returns them.
func (l *Limiter) hold(q *providerQueue, inFlight int) []*entry {
	n := ToHold(l.bound(q), inFlight, q.held.Len(), q.queued())
	if n == 0 {
		return nil
	}
	held := make([]*entry, 0, n)
	for range n {
		e := q.fair.pop()
		e.held, e.elem = true, q.held.PushBack(e)
		held = append(held, e)
	}
	return held
}

// queue is provider's queue; one per Provider ever seen, kept.
func (l *Limiter) queue(provider string) *providerQueue {
	q := l.providers[provider]
	if q == nil {
		q = &providerQueue{creating: map[types.NamespacedName]time.Time{}, adaptation: Adaptation{Bound: float64(min(BoundFloor, l.limit))}}
		l.providers[provider] = q
	}
	return q
}

// dequeue takes e out of q, wherever it waits.
func (l *Limiter) dequeue(q *providerQueue, e *entry) {
	delete(l.waiting, e.Key)
	if e.held {
		q.held.Remove(e.elem)
		e.held, e.elem = false, nil
	} else {
		q.fair.remove(e)
	}
	queuedGauge.WithLabelValues(e.provider).Set(float64(q.queued()))
}

// inFlight counts the provider's unfinished runs the cache holds, and the
// runs admitted that its list did not show. An admitted run the cache shows
// finished, or that never showed within creationGrace, no longer counts.
func (l *Limiter) inFlight(ctx context.Context, provider string, q *providerQueue) (int, error) {
	unfinished, err := l.runs.Unfinished(ctx, provider)
	if err != nil {
		return 0, err
	}
	n := len(unfinished)
	if len(q.creating) == 0 {
		inFlightGauge.WithLabelValues(provider).Set(float64(n))
		return n, nil
	}
	counted := make(map[types.NamespacedName]bool, len(unfinished))
	for _, run := range unfinished {
		counted[run] = true
	}
	now := l.now()
	for run, until := range q.creating {
		if counted[run] || now.After(until) {
			delete(q.creating, run)
			continue
		}
		// Not in the list: not cached yet, finished already, or cached just
		// after the list was read.
		ended, err := l.runs.Ended(ctx, run)
		if err != nil {
			return 0, err
		}
		if ended {
			delete(q.creating, run)
			continue
		}
		n++
	}
	inFlightGauge.WithLabelValues(provider).Set(float64(n))
	return n, nil
}

// Admits says whether a resource may start an operation when the provider
// has inFlight of limit in flight and queued resources wait, room held for
// the resource or not (a newcomer has none). Room goes to waiters in their
// turns, held for them: one it is held for starts if there is room at all;
// a newcomer gets only room none of the waiters is owed; a waiter without
// held room waits for its turn.
func Admits(limit, inFlight, queued int, held bool) bool {
	free := limit - inFlight
	if held {
		return free > 0
	}
	return queued < free
}

// ToHold is how many more of queued waiters, held of them with room held
// already, have room to be held for them.
func ToHold(limit, inFlight, held, queued int) int {
	return max(0, min(limit-inFlight-held, queued-held))
}

// ToWake is how many of the waiters room is held for (held) may start now.
func ToWake(limit, inFlight, held int) int {
	return max(0, min(limit-inFlight, held))
}
