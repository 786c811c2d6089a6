package inflight

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASlowRunLowersTheBoundAndFastOnesWakeWaiters: an adapting Provider
// starts at the floor (10); runs within the slowdown raise its bound while
// it is full, a run far slower than the fastest halves it so a newcomer
// queues, and runs within it raise it again (one a round of runs now) and
// wake the waiter into the room it makes. Another Provider keeps its own bound.
func TestASlowRunLowersTheBoundAndFastOnesWakeWaiters(t *testing.T) {
	h := newHarness(40)
	h.AdaptToOperations(2)
	ctx := context.Background()
	assert.Equal(t, BoundFloor, h.Bound("team-a/p"), "the bound starts at the floor")
	fast := Operation{Name: "experiment-create", Created: h.now, Took: 4 * time.Second}
	for i := range 20 {
		key := fmt.Sprintf("r%d", i)
		if i >= h.Bound("team-a/p") {
			h.Observe(ctx, "team-a/p", fast) // a run ended within the slowdown while the bound was full
		}
		assert.True(t, h.acquire(t, "team-a/p", key).Admitted, key)
		h.cache.runs[run(key)] = "team-a/p"
	}
	assert.Equal(t, 20, h.Bound("team-a/p"))
	h.now = h.now.Add(time.Second)
	h.Observe(ctx, "team-a/p", Operation{Name: "experiment-create", Created: h.now, Took: time.Minute})
	assert.Equal(t, 10, h.Bound("team-a/p"))
	assert.Equal(t, BoundFloor, h.Bound("team-b/p"), "each Provider adapts to its own runs")
	assert.False(t, h.acquire(t, "team-a/p", "late").Admitted, "20 in flight fill a bound of 10")

	// Ten runs end without a word (the cache shows them done): 10 in
	// flight fill the bound of 10, and the waiter stays queued.
	for i := range 10 {
		h.cache.done[run(fmt.Sprintf("r%d", i))] = true
	}
	h.woken = nil
	// After a cut the bound grows by one a round of runs (1/bound a run).
	for n := 1; h.Bound("team-a/p") == 10; n++ {
		require.LessOrEqual(t, n, 11, "ten or eleven runs within the slowdown raise a bound of 10 by one")
		assert.Empty(t, h.woken)
		h.Observe(ctx, "team-a/p", fast)
	}
	assert.Equal(t, 11, h.Bound("team-a/p"))
	assert.Equal(t, []string{"late"}, h.woken, "the room a raised bound makes goes to the waiter")
	assert.True(t, h.acquire(t, "team-a/p", "late").Admitted)
}

// TestACalmProviderKeepsItsBound: runs that end while the Provider has room
// to spare do not raise its bound, so a burst after a calm spell starts
// from where the last one left it, not from the limit.
func TestACalmProviderKeepsItsBound(t *testing.T) {
	h := newHarness(40)
	h.AdaptToOperations(2)
	for range 100 {
		h.Observe(context.Background(), "team-a/p", Operation{Name: "experiment-create", Created: h.now, Took: time.Second})
	}
	assert.Equal(t, BoundFloor, h.Bound("team-a/p"))
}

// TestWithoutASlowdownTheBoundIsTheLimit: runs' times change nothing unless
// the limiter adapts.
func TestWithoutASlowdownTheBoundIsTheLimit(t *testing.T) {
	h := newHarness(40)
	h.Observe(context.Background(), "team-a/p", Operation{Created: h.now, Took: time.Hour})
	assert.Equal(t, 40, h.Bound("team-a/p"))
}
