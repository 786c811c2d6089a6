package inflight

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pure decision: which waiter goes next. Each step is "+key" (queue
// key), "-key" (it goes: forgotten, or moved to another provider) or "next"
// (the waiter whose turn it is takes room, recorded in order).
func TestFairOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []string
		want  []string
	}{
		{"nobody waits", []string{"next"}, []string{""}},
		{"one namespace and kind: first in, first out",
			[]string{"+run/a/1", "+run/a/2", "+run/a/3", "next", "next", "next", "next"},
			[]string{"run/a/1", "run/a/2", "run/a/3", ""}},
		{"namespaces take turns, whoever queued first",
			[]string{"+run/a/1", "+run/a/2", "+run/a/3", "+run/b/1", "+run/c/1", "+run/b/2", "next", "next", "next", "next", "next", "next"},
			[]string{"run/a/1", "run/b/1", "run/c/1", "run/a/2", "run/b/2", "run/a/3"}},
		{"a namespace that starts waiting has its turn after one more of each already waiting",
			[]string{"+run/a/1", "+run/a/2", "+run/b/1", "+run/b/2", "next", "+run/c/1", "next", "next", "next", "next"},
			[]string{"run/a/1", "run/b/1", "run/a/2", "run/c/1", "run/b/2"}},
		{"one served until empty queues again behind the others' turns",
			[]string{"+run/a/1", "+run/a/2", "+run/a/3", "+run/b/1", "next", "next", "+run/b/2", "next", "next", "next"},
			[]string{"run/a/1", "run/b/1", "run/a/2", "run/b/2", "run/a/3"}},
		{"kinds take turns within a namespace",
			[]string{"+run/a/r1", "+run/a/r2", "+run/a/r3", "+pipeline/a/p1", "+experiment/a/e1", "+pipeline/a/p2", "next", "next", "next", "next", "next", "next"},
			[]string{"run/a/r1", "pipeline/a/p1", "experiment/a/e1", "run/a/r2", "pipeline/a/p2", "run/a/r3"}},
		{"kinds rotate within each namespace's own turns",
			[]string{"+run/a/r1", "+run/a/r2", "+pipeline/a/p1", "+run/b/r1", "+run/b/r2", "next", "next", "next", "next", "next"},
			[]string{"run/a/r1", "run/b/r1", "pipeline/a/p1", "run/b/r2", "run/a/r2"}},
		{"one that goes gives its place up; its line goes when empty",
			[]string{"+run/a/1", "+run/a/2", "+run/b/1", "+run/c/1", "-run/a/1", "-run/b/1", "next", "next", "next", "next"},
			[]string{"run/a/2", "run/c/1", "", ""}},
		{"one whose namespace's turn it is goes: the turn stays if others of it wait",
			[]string{"+run/a/1", "+run/b/1", "+run/b/2", "+run/c/1", "next", "-run/b/1", "next", "next", "next"},
			[]string{"run/a/1", "run/b/2", "run/c/1", ""}},
		{"the last of the namespace whose turn it is goes: the turn passes to the next",
			[]string{"+run/a/1", "+run/b/1", "+run/c/1", "+run/a/2", "next", "-run/b/1", "next", "next", "next"},
			[]string{"run/a/1", "run/c/1", "run/a/2", ""}},
		{"the last of the kind whose turn it is goes: the turn passes to the next kind",
			[]string{"+run/a/r1", "+pipeline/a/p1", "+experiment/a/e1", "+run/a/r2", "next", "-pipeline/a/p1", "next", "next", "next"},
			[]string{"run/a/r1", "experiment/a/e1", "run/a/r2", ""}},
		{"the middle of a line goes",
			[]string{"+run/a/1", "+run/a/2", "+run/a/3", "-run/a/2", "next", "next", "next"},
			[]string{"run/a/1", "run/a/3", ""}},
		{"the last waiter goes and the queue starts again",
			[]string{"+run/a/1", "-run/a/1", "next", "+run/b/1", "+run/a/2", "next", "next"},
			[]string{"", "run/b/1", "run/a/2"}},
		{"a key without a namespace is a line of its own kind",
			[]string{"+x", "+y", "+run/a/1", "next", "next", "next"},
			[]string{"x", "run/a/1", "y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f fairQueue
			queued := map[string]*entry{}
			var got []string
			for _, step := range c.steps {
				switch {
				case step == "next":
					e := f.pop()
					if e == nil {
						got = append(got, "")
						continue
					}
					got = append(got, e.Key)
					delete(queued, e.Key)
				case step[0] == '+':
					e := newEntry("p", Waiter{Key: step[1:]})
					queued[e.Key] = e
					f.push(e)
				case step[0] == '-':
					f.remove(queued[step[1:]])
					delete(queued, step[1:])
				}
				assert.Equal(t, len(queued), f.len(), "after %s", step)
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// admitNext ends the run of current (admitted before), which wakes the one
// waiter room is held for; it asks, and is admitted. It returns that one.
func (h *harness) admitNext(t *testing.T, p, current string) string {
	t.Helper()
	h.woken = nil
	h.end(p, current)
	require.Len(t, h.woken, 1, "after %s's run ended", current)
	next := h.woken[0]
	require.True(t, h.acquire(t, p, next).Admitted, next)
	return next
}

// Namespace burst-a queues 10,000 while the Provider is full; quiet-b then
// queues one: it is admitted at the next room but one (burst-a's turn was
// under way), not after the burst.
func TestAnotherNamespaceDoesNotWaitForABurst(t *testing.T) {
	const p = "team-p/kfp"
	h := newHarness(2)
	require.True(t, h.acquire(t, p, "run/burst-a/first").Admitted)
	require.True(t, h.acquire(t, p, "run/burst-a/second").Admitted)
	for i := range 10000 {
		require.False(t, h.acquire(t, p, fmt.Sprintf("run/burst-a/%d", i)).Admitted)
	}
	a := h.acquire(t, p, "run/quiet-b/one")
	assert.Equal(t, Admission{InFlight: 2, Queued: 10001}, a)

	admitted := []string{h.admitNext(t, p, "run/burst-a/first")}
	admitted = append(admitted, h.admitNext(t, p, "run/burst-a/second"))
	assert.Equal(t, []string{"run/burst-a/0", "run/quiet-b/one"}, admitted, "at most one admission after it arrived")

	// Then the burst goes on, in its order.
	assert.Equal(t, "run/burst-a/1", h.admitNext(t, p, "run/burst-a/0"))
	assert.Equal(t, "run/burst-a/2", h.admitNext(t, p, "run/quiet-b/one"))
}

// Two namespaces with bursts share the room in turns; within each, a burst
// of Runs does not starve its Pipeline, and each kind keeps its order.
func TestRoomRotatesOverNamespacesThenKinds(t *testing.T) {
	const p = "team-p/kfp"
	h := newHarness(1)
	require.True(t, h.acquire(t, p, "run/a/first").Admitted)
	for _, key := range []string{"run/a/r1", "run/a/r2", "run/a/r3", "pipeline/a/p1", "run/b/r1", "run/b/r2", "experiment/a/e1", "run/b/r3"} {
		require.False(t, h.acquire(t, p, key).Admitted, key)
	}
	var order []string
	current := "run/a/first"
	for range 8 {
		current = h.admitNext(t, p, current)
		order = append(order, current)
	}
	assert.Equal(t, []string{"run/a/r1", "run/b/r1", "pipeline/a/p1", "run/b/r2", "experiment/a/e1", "run/b/r3", "run/a/r2", "run/a/r3"}, order)
}

// A waiter whose turn has not come does not take room it finds free (its
// wake-up was lost): the room is held for the one whose turn it is, woken.
func TestFreeRoomGoesInTurnWhoeverAsks(t *testing.T) {
	const p = "team-p/kfp"
	h := newHarness(1)
	require.True(t, h.acquire(t, p, "run/a/first").Admitted)
	require.False(t, h.acquire(t, p, "run/a/1").Admitted)
	require.False(t, h.acquire(t, p, "run/a/2").Admitted)
	require.False(t, h.acquire(t, p, "run/b/1").Admitted)
	// The run ends; the wake-up is lost.
	h.cache.runs[run("run/a/first")] = p
	h.cache.done[run("run/a/first")] = true

	assert.Equal(t, Admission{InFlight: 0, Queued: 3}, h.acquire(t, p, "run/b/1"), "a/1's turn")
	assert.Equal(t, []string{"run/a/1"}, h.woken)
	assert.Equal(t, Admission{InFlight: 0, Queued: 4}, h.acquire(t, p, "run/c/1"), "a newcomer neither")
	assert.True(t, h.acquire(t, p, "run/a/1").Admitted)
	// c/1 queued when a and b waited: one more of each goes first.
	assert.Equal(t, "run/b/1", h.admitNext(t, p, "run/a/1"))
	assert.Equal(t, "run/a/2", h.admitNext(t, p, "run/b/1"))
	assert.Equal(t, "run/c/1", h.admitNext(t, p, "run/a/2"))
}

// Room held for a waiter that goes (deleted, or it needs no run now) is
// held for the next in turn, of another namespace; one of a waiter that
// moves to another Provider too.
func TestRoomHeldForAWaiterThatGoesIsTheNextInTurn(t *testing.T) {
	const p = "team-p/kfp"
	h := newHarness(1)
	ctx := context.Background()
	require.True(t, h.acquire(t, p, "run/a/first").Admitted)
	for _, key := range []string{"run/a/1", "run/a/2", "run/b/1", "run/c/1"} {
		require.False(t, h.acquire(t, p, key).Admitted)
	}
	h.end(p, "run/a/first")
	require.Equal(t, []string{"run/a/1"}, h.woken)
	// A run the cache shows late takes the room back before a/1 asks.
	h.cache.runs[run("run/x/late")] = p
	h.woken = nil
	assert.Equal(t, Admission{InFlight: 1, Queued: 4, Held: true}, h.acquire(t, p, "run/a/1"), "room held for it, full")
	h.forget("run/a/1")
	assert.Empty(t, h.woken, "no room to wake anyone into")
	h.cache.done[run("run/x/late")] = true
	h.Wake(ctx, p)
	assert.Equal(t, []string{"run/b/1"}, h.woken, "the next in turn after a")

	h.woken = nil
	assert.True(t, h.acquire(t, "team-p/other", "run/b/1").Admitted, "b/1 moved to another provider")
	assert.Equal(t, []string{"run/c/1"}, h.woken)
	assert.True(t, h.acquire(t, p, "run/c/1").Admitted)
	assert.Equal(t, "run/a/2", h.admitNext(t, p, "run/c/1"))
}
