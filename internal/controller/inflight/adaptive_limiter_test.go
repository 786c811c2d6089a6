package inflight

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestASlowPickupLowersTheBoundAndFastOnesWakeWaiters: with 20 in flight
// of a limit of 40, a run Tekton took a minute to pick up halves the
// Provider's bound to 20, so a newcomer queues; fast pickups raise it again
// and wake the waiter into the room they make. Another Provider keeps its
// own bound.
func TestASlowPickupLowersTheBoundAndFastOnesWakeWaiters(t *testing.T) {
	h := newHarness(40)
	h.AdaptToPickups(5 * time.Second)
	ctx := context.Background()
	for i := range 20 {
		key := fmt.Sprintf("r%d", i)
		assert.True(t, h.acquire(t, "team-a/p", key).Admitted)
		h.cache.runs[run(key)] = "team-a/p"
	}
	assert.Equal(t, 40, h.Bound("team-a/p"))
	h.Picked(ctx, "team-a/p", Pickup{Created: h.now.Add(-time.Minute), Wait: time.Minute})
	assert.Equal(t, 20, h.Bound("team-a/p"))
	assert.Equal(t, 40, h.Bound("team-b/p"), "each Provider adapts to its own runs")
	assert.False(t, h.acquire(t, "team-a/p", "late").Admitted, "20 in flight fill a bound of 20")

	h.now = h.now.Add(time.Second)
	h.Picked(ctx, "team-a/p", Pickup{Created: h.now, Wait: time.Second})
	assert.Equal(t, 21, h.Bound("team-a/p"))
	assert.Equal(t, []string{"late"}, h.woken, "the room a raised bound makes goes to the waiter")
	assert.True(t, h.acquire(t, "team-a/p", "late").Admitted)
}

// TestWithoutATargetTheBoundIsTheLimit: pickups change nothing unless the
// limiter adapts.
func TestWithoutATargetTheBoundIsTheLimit(t *testing.T) {
	h := newHarness(40)
	h.Picked(context.Background(), "team-a/p", Pickup{Created: h.now, Wait: time.Hour})
	assert.Equal(t, 40, h.Bound("team-a/p"))
}
