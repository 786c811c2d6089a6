// Package inflight bounds the operation PipelineRuns each Provider has
// running at once, across every resource kind. A burst of resources (a
// release applying thousands) would otherwise flood Tekton, whose queue
// makes every run wait a pass over all the others between steps: the whole
// burst then finishes together at its end, and any operation timeout shorter
// than that fails all of it. Resources beyond the limit wait in a first-in,
// first-out queue per Provider and are woken as runs end, with no polling.
package inflight

import (
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

// Limiter admits operations up to Limit in flight per Provider.
type Limiter struct {
	limit int
	runs  Runs
	now   func() time.Time

	mu        sync.Mutex
	providers map[string]*providerQueue
	// waiting maps each queued Waiter's key to its provider.
	waiting map[string]string
}

// providerQueue is one Provider's waiters and its runs being created.
type providerQueue struct {
	waiters []Waiter
	// creating are runs admitted and created (or being created) that the
	// cache has not shown yet, until when they stop counting.
	creating map[types.NamespacedName]time.Time
}

// creationGrace bounds how long an admitted run the cache does not show
// counts (one deleted at once never shows).
const creationGrace = 30 * time.Second

// New is a limiter admitting limit operations in flight per Provider.
func New(limit int, runs Runs, now func() time.Time) *Limiter {
	return &Limiter{limit: limit, runs: runs, now: now,
		providers: map[string]*providerQueue{}, waiting: map[string]string{}}
}

// Limit is the operations in flight each Provider may have.
func (l *Limiter) Limit() int { return l.limit }

// Admission is the answer to Acquire.
type Admission struct {
	Admitted bool
	// InFlight counts the provider's operations in flight when asked
	// (the new one not included).
	InFlight int
	// Position is the waiter's place in its provider's queue (0 = next),
	// and Queued the queue's length, when not admitted.
	Position, Queued int
}

// Acquire admits w's operation, whose run will be named run, if the
// provider has room for it and no earlier waiter is owed that room; else
// w waits in the provider's queue (once, at its first place) until Wake.
// An admitted run counts from now on: Release it if it is not created.
func (l *Limiter) Acquire(ctx context.Context, provider string, w Waiter, run types.NamespacedName) (Admission, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if was, ok := l.waiting[w.Key]; ok && was != provider {
		// Its spec names another Provider now (allowed until it has a
		// backend id): its place in the old queue is someone else's.
		old := l.queue(was)
		l.dequeue(was, old, old.position(w.Key))
		l.wake(ctx, was, old)
	}
	q := l.queue(provider)
	inFlight, err := l.inFlight(ctx, provider, q)
	if err != nil {
		return Admission{}, err
	}
	position := q.position(w.Key)
	if !Admits(l.limit, inFlight, position, len(q.waiters)) {
		if position < 0 {
			position = len(q.waiters)
			q.waiters = append(q.waiters, w)
			l.waiting[w.Key] = provider
			queuedGauge.WithLabelValues(provider).Set(float64(len(q.waiters)))
		}
		return Admission{InFlight: inFlight, Position: position, Queued: len(q.waiters)}, nil
	}
	if position >= 0 {
		l.dequeue(provider, q, position)
	}
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
// needs to start an operation. A waiter it was owed room goes to the next.
func (l *Limiter) Forget(ctx context.Context, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	provider, ok := l.waiting[key]
	if !ok {
		return
	}
	q := l.queue(provider)
	l.dequeue(provider, q, q.position(key))
	l.wake(ctx, provider, q)
}

// Wake wakes the provider's waiters that now have room: call it when one
// of its runs ends or goes.
func (l *Limiter) Wake(ctx context.Context, provider string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.providers[provider]; q != nil && len(q.waiters) > 0 {
		l.wake(ctx, provider, q)
	}
}

// wake wakes the first waiters that have room. Each takes its room in its
// own reconcile (Acquire), so waking one twice is harmless.
func (l *Limiter) wake(ctx context.Context, provider string, q *providerQueue) {
	if len(q.waiters) == 0 {
		return
	}
	inFlight, err := l.inFlight(ctx, provider, q)
	if err != nil {
		return // the waiters' own requeue looks again
	}
	for _, w := range q.waiters[:ToWake(l.limit, inFlight, len(q.waiters))] {
		w.Wake()
	}
}

// queue is provider's queue; one per Provider ever seen, kept.
func (l *Limiter) queue(provider string) *providerQueue {
	q := l.providers[provider]
	if q == nil {
		q = &providerQueue{creating: map[types.NamespacedName]time.Time{}}
		l.providers[provider] = q
	}
	return q
}

func (l *Limiter) dequeue(provider string, q *providerQueue, position int) {
	delete(l.waiting, q.waiters[position].Key)
	q.waiters = append(q.waiters[:position], q.waiters[position+1:]...)
	queuedGauge.WithLabelValues(provider).Set(float64(len(q.waiters)))
}

func (q *providerQueue) position(key string) int {
	for i, w := range q.waiters {
		if w.Key == key {
			return i
		}
	}
	return -1
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
// has inFlight of limit in flight and queued resources wait, the resource
// at position among them (-1: not among them). Waiters are served first in,
// first out: room goes to the first ones; a newcomer gets only room none of
// them is owed.
func Admits(limit, inFlight, position, queued int) bool {
	free := limit - inFlight
	if position >= 0 {
		return position < free
	}
	return queued < free
}

// ToWake is how many of queued waiters have room to start.
func ToWake(limit, inFlight, queued int) int {
	return max(0, min(limit-inFlight, queued))
}
