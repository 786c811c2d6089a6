package inflight_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/inflight"
)

func TestAdapt(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	const limit, floor, target = 200, 10, 5 * time.Second
	fast := func(created time.Time) inflight.Pickup { return inflight.Pickup{Created: created, Wait: time.Second} }
	slow := func(created time.Time) inflight.Pickup {
		return inflight.Pickup{Created: created, Wait: 30 * time.Second}
	}
	for name, c := range map[string]struct {
		a    inflight.Adaptation
		p    inflight.Pickup
		want inflight.Adaptation
	}{
		"a fast pickup at the limit: stays":     {inflight.Adaptation{Bound: 200}, fast(t0), inflight.Adaptation{Bound: 200}},
		"a fast pickup below it: one more":      {inflight.Adaptation{Bound: 50, LastCut: t0}, fast(t0), inflight.Adaptation{Bound: 51, LastCut: t0}},
		"at the target exactly: one more":       {inflight.Adaptation{Bound: 50}, inflight.Pickup{Created: t0, Wait: target}, inflight.Adaptation{Bound: 51}},
		"a slow pickup: halved, the cut is now": {inflight.Adaptation{Bound: 200}, slow(t0), inflight.Adaptation{Bound: 100, LastCut: now}},
		"an odd bound halves down":              {inflight.Adaptation{Bound: 51}, slow(t0), inflight.Adaptation{Bound: 25, LastCut: now}},
		"never under the floor":                 {inflight.Adaptation{Bound: 12}, slow(t0), inflight.Adaptation{Bound: 10, LastCut: now}},
		"slow, but created before the last cut": {inflight.Adaptation{Bound: 100, LastCut: t0.Add(time.Second)}, slow(t0), inflight.Adaptation{Bound: 100, LastCut: t0.Add(time.Second)}},
		"slow, of the generation after the cut": {inflight.Adaptation{Bound: 100, LastCut: t0}, slow(t0.Add(time.Second)), inflight.Adaptation{Bound: 50, LastCut: now}},
		"a fast old run still raises it":        {inflight.Adaptation{Bound: 100, LastCut: t0.Add(time.Second)}, fast(t0), inflight.Adaptation{Bound: 101, LastCut: t0.Add(time.Second)}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, inflight.Adapt(c.a, c.p, now, limit, floor, target))
		})
	}
	t.Run("a limit under the floor is the floor", func(t *testing.T) {
		assert.Equal(t, inflight.Adaptation{Bound: 4, LastCut: now}, inflight.Adapt(inflight.Adaptation{Bound: 4}, slow(t0), now, 4, floor, target))
	})
}

// TestAdaptSettlesNearTheKnee simulates a Tekton that works through
// capacity runs at once (a run beyond them waits a whole round): from the
// configured limit the bound falls to where pickups are fast and stays
// within a factor of two of capacity, never starving it.
func TestAdaptSettlesNearTheKnee(t *testing.T) {
	const limit, floor, capacity, target = 200, 10, 30, 5 * time.Second
	a := inflight.Adaptation{Bound: limit}
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	var low, high float64 = limit, 0
	for round := range 200 {
		// A round: the bound's runs are created now and picked up in order;
		// those beyond capacity wait a round of 10 s for each capacity ahead.
		n := int(a.Bound)
		for i := range n {
			wait := time.Duration(i/capacity) * 10 * time.Second
			a = inflight.Adapt(a, inflight.Pickup{Created: now, Wait: wait}, now.Add(wait), limit, floor, target)
		}
		now = now.Add(10 * time.Second)
		if round >= 20 {
			low, high = min(low, a.Bound), max(high, a.Bound)
		}
	}
	assert.GreaterOrEqual(t, low, float64(capacity)/2, "the bound keeps Tekton fed")
	assert.LessOrEqual(t, high, float64(capacity)*2+1, "the bound keeps Tekton's queue short")
	t.Logf("after settling the bound stays within [%.0f, %.0f] for a capacity of %d", low, high, capacity)
}
