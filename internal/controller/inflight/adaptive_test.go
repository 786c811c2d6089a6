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
	const limit, floor, slowdown = 200, 10, 2
	fastest := func(took time.Duration) map[string]inflight.Fastest {
		return map[string]inflight.Fastest{"experiment-create": {Took: took, At: t0}}
	}
	op := func(created time.Time, took time.Duration, limited bool) inflight.Operation {
		return inflight.Operation{Name: "experiment-create", Created: created, Took: took, Limited: limited}
	}
	for name, c := range map[string]struct {
		a    inflight.Adaptation
		o    inflight.Operation
		want inflight.Adaptation
	}{
		"within, limited, at the limit: stays": {inflight.Adaptation{Bound: 200, Fastest: fastest(4 * time.Second)}, op(t0, 5*time.Second, true),
			inflight.Adaptation{Bound: 200, Fastest: fastest(4 * time.Second)}},
		"within and limited, after a cut: one more a round of runs": {inflight.Adaptation{Bound: 50, LastCut: t0, Fastest: fastest(4 * time.Second)}, op(t0, 5*time.Second, true),
			inflight.Adaptation{Bound: 50.02, LastCut: t0, Fastest: fastest(4 * time.Second)}},
		"within but not limited: stays (a calm spell leaves no high bound)": {inflight.Adaptation{Bound: 50, Fastest: fastest(4 * time.Second)}, op(t0, 5*time.Second, false),
			inflight.Adaptation{Bound: 50, Fastest: fastest(4 * time.Second)}},
		"at slowdown × fastest + the quantum exactly: within": {inflight.Adaptation{Bound: 50, Fastest: fastest(4 * time.Second)}, op(t0, 9*time.Second, true),
			inflight.Adaptation{Bound: 51, Fastest: fastest(4 * time.Second)}},
		"slow: halved, the cut is now": {inflight.Adaptation{Bound: 200, Fastest: fastest(4 * time.Second)}, op(t0, 10*time.Second, true),
			inflight.Adaptation{Bound: 100, LastCut: now, Fastest: fastest(4 * time.Second)}},
		"slow even when not limited": {inflight.Adaptation{Bound: 51, Fastest: fastest(4 * time.Second)}, op(t0, time.Minute, false),
			inflight.Adaptation{Bound: 25, LastCut: now, Fastest: fastest(4 * time.Second)}},
		"never under the floor": {inflight.Adaptation{Bound: 12, Fastest: fastest(time.Second)}, op(t0, time.Minute, true),
			inflight.Adaptation{Bound: 10, LastCut: now, Fastest: fastest(time.Second)}},
		"slow, but created before the last cut": {inflight.Adaptation{Bound: 100, LastCut: t0.Add(time.Second), Fastest: fastest(time.Second)}, op(t0, time.Minute, true),
			inflight.Adaptation{Bound: 100, LastCut: t0.Add(time.Second), Fastest: fastest(time.Second)}},
		"slow, of the generation after the cut": {inflight.Adaptation{Bound: 100, LastCut: t0, Fastest: fastest(time.Second)}, op(t0.Add(time.Second), time.Minute, true),
			inflight.Adaptation{Bound: 50, LastCut: now, Fastest: fastest(time.Second)}},
		"the first run of an operation is its fastest": {inflight.Adaptation{Bound: 10}, op(t0, time.Minute, true),
			inflight.Adaptation{Bound: 11, Fastest: map[string]inflight.Fastest{"experiment-create": {Took: time.Minute, At: now}}}},
		"a faster run is the new fastest": {inflight.Adaptation{Bound: 10, Fastest: fastest(4 * time.Second)}, op(t0, 3*time.Second, true),
			inflight.Adaptation{Bound: 11, Fastest: map[string]inflight.Fastest{"experiment-create": {Took: 3 * time.Second, At: now}}}},
		"each operation has its own fastest": {inflight.Adaptation{Bound: 10, Fastest: fastest(time.Second)}, inflight.Operation{Name: "pipeline-create", Created: t0, Took: time.Minute, Limited: true},
			inflight.Adaptation{Bound: 11, Fastest: map[string]inflight.Fastest{"experiment-create": {Took: time.Second, At: t0}, "pipeline-create": {Took: time.Minute, At: now}}}},
		"a fastest older than the window is measured again": {inflight.Adaptation{Bound: 10, Fastest: fastest(time.Second)}, op(t0.Add(time.Hour), time.Minute, true),
			inflight.Adaptation{Bound: 11, Fastest: map[string]inflight.Fastest{"experiment-create": {Took: time.Minute, At: t0.Add(time.Hour)}}}},
	} {
		t.Run(name, func(t *testing.T) {
			at := now
			if c.o.Created.After(now) {
				at = c.o.Created
			}
			before := c.a.Fastest["experiment-create"]
			assert.Equal(t, c.want, inflight.Adapt(c.a, c.o, at, limit, floor, slowdown))
			assert.Equal(t, before, c.a.Fastest["experiment-create"], "the adaptation given is not changed")
		})
	}
	t.Run("a limit under the floor is the floor", func(t *testing.T) {
		got := inflight.Adapt(inflight.Adaptation{Bound: 4, Fastest: fastest(time.Second)}, op(t0, time.Minute, true), now, 4, floor, slowdown)
		assert.Equal(t, 4.0, got.Bound)
	})
}

// TestAdaptSettlesNearTheKnee simulates a Tekton that works on capacity
// runs at once, first in first out, each for 4 s, fed by a burst that keeps
// the bound full: from the floor the bound rises to where runs start to
// wait and then saws between capacity and (slowdown + 1) × capacity:
// Tekton is never starved, and no run takes much more than slowdown times
// its time alone (the overshoot is the run's own time: it says it was slow
// only when it ends).
func TestAdaptSettlesNearTheKnee(t *testing.T) {
	const limit, floor, capacity, slowdown = 200, 10, 30, 2
	const work, tick = 4 * time.Second, 500 * time.Millisecond
	type run struct{ created, done time.Time }
	a := inflight.Adaptation{Bound: floor}
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	var (
		queue, working []run   // Tekton's queue, and the runs it works on
		low, high      float64 = limit, 0
		ended          int
		slowest        time.Duration
	)
	for step := range 2000 {
		now = now.Add(tick)
		var still []run
		for _, r := range working {
			if r.done.After(now) {
				still = append(still, r)
				continue
			}
			ended++
			if step >= 400 {
				slowest = max(slowest, now.Sub(r.created))
			}
			a = inflight.Adapt(a, inflight.Operation{Name: "op", Created: r.created, Took: now.Sub(r.created), Limited: true}, now, limit, floor, slowdown)
		}
		working = still
		for len(working) < capacity && len(queue) > 0 {
			working, queue = append(working, run{queue[0].created, now.Add(work)}), queue[1:]
		}
		for len(working)+len(queue) < int(a.Bound) {
			queue = append(queue, run{created: now})
		}
		if step >= 400 {
			low, high = min(low, a.Bound), max(high, a.Bound)
		}
	}
	assert.GreaterOrEqual(t, low, float64(capacity), "the bound keeps Tekton fed")
	assert.LessOrEqual(t, high, float64(capacity*(slowdown+1)), "the bound keeps Tekton's queue short")
	assert.LessOrEqual(t, slowest, time.Duration(slowdown+1)*work+time.Second, "no run waits long in Tekton's queue")
	t.Logf("after settling the bound stays within [%.0f, %.0f] for a capacity of %d; the slowest run took %v (%v alone); %d runs ended", low, high, capacity, slowest, work, ended)
}
