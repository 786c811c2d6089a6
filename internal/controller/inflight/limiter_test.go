package inflight

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func TestAdmits(t *testing.T) {
	for _, c := range []struct {
		name                              string
		limit, inFlight, position, queued int
		want                              bool
	}{
		{"room and nobody waiting", 3, 2, -1, 0, true},
		{"full", 3, 3, -1, 0, false},
		{"over the limit (it was lowered)", 3, 5, -1, 0, false},
		{"room, but owed to the one waiting", 3, 2, -1, 1, false},
		{"room beyond what the waiters are owed", 3, 1, -1, 1, true},
		{"first waiter, room for one", 3, 2, 0, 4, true},
		{"second waiter, room for one", 3, 2, 1, 4, false},
		{"second waiter, room for two", 3, 1, 1, 4, true},
		{"first waiter, full", 3, 3, 0, 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Admits(c.limit, c.inFlight, c.position, c.queued))
		})
	}
}

func TestToWake(t *testing.T) {
	for _, c := range []struct{ limit, inFlight, queued, want int }{
		{3, 3, 5, 0},
		{3, 1, 5, 2},
		{3, 0, 1, 1},
		{3, 7, 5, 0},
		{3, 0, 0, 0},
	} {
		assert.Equal(t, c.want, ToWake(c.limit, c.inFlight, c.queued), "limit %d, in flight %d, queued %d", c.limit, c.inFlight, c.queued)
	}
}

// fakeRuns is the cache: runs per provider, and which are done.
type fakeRuns struct {
	runs map[types.NamespacedName]string // run → provider
	done map[types.NamespacedName]bool
	// late runs are cached just after Unfinished read the index.
	late map[types.NamespacedName]bool
}

func (f *fakeRuns) Unfinished(_ context.Context, provider string) ([]types.NamespacedName, error) {
	var out []types.NamespacedName
	for run, p := range f.runs {
		if p == provider && !f.done[run] && !f.late[run] {
			out = append(out, run)
		}
	}
	return out, nil
}

func (f *fakeRuns) Ended(_ context.Context, run types.NamespacedName) (bool, error) {
	_, ok := f.runs[run]
	return ok && f.done[run], nil
}

type harness struct {
	*Limiter
	cache *fakeRuns
	now   time.Time
	woken []string
}

func newHarness(limit int) *harness {
	h := &harness{cache: &fakeRuns{runs: map[types.NamespacedName]string{}, done: map[types.NamespacedName]bool{}},
		now: time.Unix(1000, 0)}
	h.Limiter = New(limit, h.cache, func() time.Time { return h.now })
	return h
}

func (h *harness) waiter(key string) Waiter {
	return Waiter{Key: key, Wake: func() { h.woken = append(h.woken, key) }}
}

func run(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "team-a", Name: name}
}

// acquire asks for key's run (named as key) with provider p.
func (h *harness) acquire(t *testing.T, p, key string) Admission {
	t.Helper()
	a, err := h.Acquire(context.Background(), p, h.waiter(key), run(key))
	require.NoError(t, err)
	return a
}

func TestQueueIsFirstInFirstOutAndWokenAsRunsEnd(t *testing.T) {
	h := newHarness(2)
	ctx := context.Background()
	assert.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	assert.True(t, h.acquire(t, "team-a/p", "b").Admitted, "admitted runs count before the cache shows them")
	c := h.acquire(t, "team-a/p", "c")
	assert.Equal(t, Admission{InFlight: 2, Position: 0, Queued: 1}, c)
	assert.Equal(t, Admission{InFlight: 2, Position: 1, Queued: 2}, h.acquire(t, "team-a/p", "d"))
	assert.Equal(t, 0, h.acquire(t, "team-a/p", "c").Position, "asking again keeps the first place")
	assert.True(t, h.acquire(t, "team-b/p", "x").Admitted, "another provider has its own room")

	h.cache.runs[run("a")], h.cache.runs[run("b")] = "team-a/p", "team-a/p"
	assert.False(t, h.acquire(t, "team-a/p", "e").Admitted, "runs in the cache count as before")
	assert.Empty(t, h.woken)

	h.cache.done[run("a")] = true
	h.Wake(ctx, "team-a/p")
	assert.Equal(t, []string{"c"}, h.woken, "room for one: the first waiter")
	assert.False(t, h.acquire(t, "team-a/p", "d").Admitted, "the room is c's")
	assert.False(t, h.acquire(t, "team-a/p", "f").Admitted, "a newcomer does not jump the queue")
	assert.True(t, h.acquire(t, "team-a/p", "c").Admitted)
	assert.False(t, h.acquire(t, "team-a/p", "d").Admitted, "c's run counts")

	h.woken = nil
	h.cache.runs[run("c")] = "team-a/p"
	h.cache.done[run("b")], h.cache.done[run("c")] = true, true
	h.Wake(ctx, "team-a/p")
	assert.Equal(t, []string{"d", "e"}, h.woken, "room for two: the next two, in order")
}

func TestForgottenWaiterPassesItsRoomOn(t *testing.T) {
	h := newHarness(1)
	ctx := context.Background()
	require.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	h.acquire(t, "team-a/p", "b")
	h.acquire(t, "team-a/p", "c")
	h.cache.runs[run("a")] = "team-a/p"
	h.cache.done[run("a")] = true
	h.Wake(ctx, "team-a/p")
	require.Equal(t, []string{"b"}, h.woken)

	// b was deleted (or no longer needs to start one) before it took the room.
	h.woken = nil
	h.Forget(ctx, "b")
	assert.Equal(t, []string{"c"}, h.woken)
	assert.True(t, h.acquire(t, "team-a/p", "c").Admitted)
	h.Forget(ctx, "nobody") // not queued: nothing happens
}

func TestReleasedRoomGoesToTheNextWaiter(t *testing.T) {
	h := newHarness(1)
	require.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	assert.False(t, h.acquire(t, "team-a/p", "b").Admitted)
	h.Release(context.Background(), "team-a/p", run("a")) // its create was refused
	assert.Equal(t, []string{"b"}, h.woken)
	assert.True(t, h.acquire(t, "team-a/p", "b").Admitted)
}

func TestAdmittedRunStopsCountingWhenSeenFinishedOrNeverSeen(t *testing.T) {
	h := newHarness(1)
	require.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	assert.False(t, h.acquire(t, "team-a/p", "b").Admitted, "created, not cached yet")

	// It ended before anyone counted it running.
	h.cache.runs[run("a")] = "team-a/p"
	h.cache.done[run("a")] = true
	assert.True(t, h.acquire(t, "team-a/p", "b").Admitted)

	// b's run was deleted before the cache ever showed it.
	assert.False(t, h.acquire(t, "team-a/p", "c").Admitted)
	h.now = h.now.Add(creationGrace + time.Second)
	assert.True(t, h.acquire(t, "team-a/p", "c").Admitted)
}

func TestWaiterThatMovesToAnotherProviderLeavesTheOldQueue(t *testing.T) {
	h := newHarness(1)
	require.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	require.False(t, h.acquire(t, "team-a/p", "b").Admitted)
	require.False(t, h.acquire(t, "team-a/p", "c").Admitted)
	assert.True(t, h.acquire(t, "team-a/q", "b").Admitted, "b's spec names another provider now")
	assert.Empty(t, h.woken, "no room in the old queue yet")

	h.cache.runs[run("a")] = "team-a/p"
	h.cache.done[run("a")] = true
	h.Wake(context.Background(), "team-a/p")
	assert.Equal(t, []string{"c"}, h.woken, "c is first now")
	assert.True(t, h.acquire(t, "team-a/p", "c").Admitted)
}

func TestAdmittedRunCachedWhileCountingStillCounts(t *testing.T) {
	h := newHarness(1)
	require.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	h.cache.runs[run("a")] = "team-a/p"
	h.cache.late = map[types.NamespacedName]bool{run("a"): true}
	assert.False(t, h.acquire(t, "team-a/p", "b").Admitted, "in the cache, unfinished, though not in the list read a moment before")
}
