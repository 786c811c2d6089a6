package inflight

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// noRuns is a cache that shows no run: admitted runs count until Released.
type noRuns struct{}

func (noRuns) Unfinished(context.Context, string) ([]types.NamespacedName, error) { return nil, nil }
func (noRuns) Ended(context.Context, types.NamespacedName) (bool, error)          { return false, nil }

// burst is a limiter with room for one operation, taken, and 10,000
// waiters of namespace burst-a (Runs) queued before one of namespace
// quiet-b: the shape of one team's release applied beside another's Run.
type burst struct {
	l      *Limiter
	woken  string
	taken  types.NamespacedName
	queued []string // what recheck asks again, round in turn
}

const benchProvider = "team-p/kfp"

func newBurst(b *testing.B, waiting int) *burst {
	s := &burst{l: New(1, noRuns{}, time.Now)}
	ctx := context.Background()
	s.taken = types.NamespacedName{Namespace: "burst-a", Name: "first"}
	if a, err := s.l.Acquire(ctx, benchProvider, s.waiter("run/burst-a/first"), s.taken); err != nil || !a.Admitted {
		b.Fatal("the first is not admitted", err)
	}
	for i := range waiting {
		s.enqueue(b, fmt.Sprintf("run/burst-a/r-%d", i))
	}
	s.enqueue(b, "run/quiet-b/r-0")
	return s
}

func (s *burst) waiter(key string) Waiter {
	return Waiter{Key: key, Wake: func() { s.woken = key }}
}

func runOf(key string) types.NamespacedName {
	parts := strings.SplitN(key, "/", 3)
	return types.NamespacedName{Namespace: parts[1], Name: parts[0] + "-" + parts[2]}
}

func (s *burst) enqueue(b *testing.B, key string) {
	a, err := s.l.Acquire(context.Background(), benchProvider, s.waiter(key), runOf(key))
	if err != nil || a.Admitted {
		b.Fatal("a waiter is admitted with no room", key, err)
	}
	s.queued = append(s.queued, key)
}

// admitNext is one admission at steady state: the run in flight ends (its
// room is given back), the waiter woken for it asks again and is admitted,
// and a newcomer of the same namespace takes its place in the queue.
func (s *burst) admitNext(b *testing.B, i int) {
	ctx := context.Background()
	s.woken = ""
	s.l.Release(ctx, benchProvider, s.taken)
	key := s.woken
	if key == "" {
		b.Fatal("nobody woken")
	}
	a, err := s.l.Acquire(ctx, benchProvider, s.waiter(key), runOf(key))
	if err != nil || !a.Admitted {
		b.Fatal("the woken waiter is not admitted", key, err)
	}
	s.taken = runOf(key)
	parts := strings.SplitN(key, "/", 3)
	s.enqueue(b, fmt.Sprintf("run/%s/n-%d", parts[1], i))
}

// BenchmarkAdmission: one admission (a run ends, the next waiter starts, a
// newcomer queues) with 10,000 waiters in one namespace and 1 in another.
func BenchmarkAdmission(b *testing.B) {
	s := newBurst(b, 10000)
	b.ResetTimer()
	for i := range b.N {
		s.admitNext(b, i)
	}
}

// BenchmarkQueuedRecheck: a waiter that has no room asks again (its
// fallback recheck, or a wake-up it shares), 10,000 waiting before it.
func BenchmarkQueuedRecheck(b *testing.B) {
	s := newBurst(b, 10000)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		key := s.queued[len(s.queued)-1-i%100]
		a, err := s.l.Acquire(ctx, benchProvider, s.waiter(key), runOf(key))
		if err != nil || a.Admitted {
			b.Fatal("admitted with no room", key, err)
		}
	}
}
