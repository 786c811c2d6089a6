package inflight

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func TestAdmits(t *testing.T) {
	for _, c := range []struct {
		name                    string
		limit, inFlight, queued int
		held                    bool
		want                    bool
	}{
		{"room and nobody waiting", 3, 2, 0, false, true},
		{"full", 3, 3, 0, false, false},
		{"over the limit (it was lowered)", 3, 5, 0, false, false},
		{"room, but owed to the one waiting", 3, 2, 1, false, false},
		{"room beyond what the waiters are owed", 3, 1, 1, false, true},
		{"room held for it, room for one", 3, 2, 4, true, true},
		{"room held for it, full (runs the cache had not shown)", 3, 3, 4, true, false},
		{"a waiter without held room waits its turn", 3, 2, 4, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Admits(c.limit, c.inFlight, c.queued, c.held))
		})
	}
}

func TestToHold(t *testing.T) {
	for _, c := range []struct{ limit, inFlight, held, queued, want int }{
		{3, 3, 0, 5, 0},
		{3, 1, 0, 5, 2},
		{3, 1, 1, 5, 1},
		{3, 1, 2, 5, 0},
		{3, 0, 0, 1, 1},
		{3, 0, 1, 1, 0},
		{3, 7, 0, 5, 0},
		{3, 7, 2, 5, 0},
		{3, 0, 0, 0, 0},
	} {
		assert.Equal(t, c.want, ToHold(c.limit, c.inFlight, c.held, c.queued), "limit %d, in flight %d, held %d, queued %d", c.limit, c.inFlight, c.held, c.queued)
	}
}

func TestToWake(t *testing.T) {
	for _, c := range []struct{ limit, inFlight, held, want int }{
		{3, 3, 2, 0},
		{3, 1, 2, 2},
		{3, 2, 2, 1},
		{3, 0, 1, 1},
		{3, 7, 3, 0},
		{3, 0, 0, 0},
	} {
		assert.Equal(t, c.want, ToWake(c.limit, c.inFlight, c.held), "limit %d, in flight %d, held %d", c.limit, c.inFlight, c.held)
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

// waiter is the waiter for key: "kind/namespace/name", or a name alone
// for a Pipeline of team-a. Its wake-ups record key as given.
func (h *harness) waiter(key string) Waiter {
	return Waiter{Key: qualified(key), Wake: func() { h.woken = append(h.woken, key) }}
}

func qualified(key string) string {
	if strings.Contains(key, "/") {
		return key
	}
	return "pipeline/team-a/" + key
}

// run is the run key's resource starts (in team-a, named after key).
func run(key string) types.NamespacedName {
	return types.NamespacedName{Namespace: "team-a", Name: strings.ReplaceAll(key, "/", ".")}
}

// acquire asks for key's run with provider p.
func (h *harness) acquire(t *testing.T, p, key string) Admission {
	t.Helper()
	a, err := h.Acquire(context.Background(), p, h.waiter(key), run(key))
	require.NoError(t, err)
	return a
}

func (h *harness) forget(key string) { h.Forget(context.Background(), qualified(key)) }

// end ends the run key's resource started, as the cache shows it, and
// wakes its provider p, as the informer does.
func (h *harness) end(p, key string) {
	h.cache.runs[run(key)] = p
	h.cache.done[run(key)] = true
	h.Wake(context.Background(), p)
}

func TestOneNamespaceAndKindIsFirstInFirstOutAndWokenAsRunsEnd(t *testing.T) {
	h := newHarness(2)
	ctx := context.Background()
	assert.True(t, h.acquire(t, "team-a/p", "a").Admitted)
	assert.True(t, h.acquire(t, "team-a/p", "b").Admitted, "admitted runs count before the cache shows them")
	c := h.acquire(t, "team-a/p", "c")
	assert.Equal(t, Admission{InFlight: 2, Queued: 1}, c)
	assert.Equal(t, Admission{InFlight: 2, Queued: 2}, h.acquire(t, "team-a/p", "d"))
	assert.Equal(t, Admission{InFlight: 2, Queued: 2}, h.acquire(t, "team-a/p", "c"), "asking again keeps the first place (once)")
	assert.True(t, h.acquire(t, "team-b/p", "x").Admitted, "another provider has its own room")

	h.cache.runs[run("a")], h.cache.runs[run("b")] = "team-a/p", "team-a/p"
	assert.False(t, h.acquire(t, "team-a/p", "e").Admitted, "runs in the cache count as before")
	assert.Empty(t, h.woken)

	h.cache.done[run("a")] = true
	h.Wake(ctx, "team-a/p")
	assert.Equal(t, []string{"c"}, h.woken, "room for one: the first waiter")
	assert.Equal(t, Admission{InFlight: 1, Queued: 3}, h.acquire(t, "team-a/p", "d"), "the room is c's")
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
	h.forget("b")
	assert.Equal(t, []string{"c"}, h.woken)
	assert.True(t, h.acquire(t, "team-a/p", "c").Admitted)
	h.forget("nobody") // not queued: nothing happens
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
