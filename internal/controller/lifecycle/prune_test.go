package lifecycle

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// pruneRun is run ordinal of op at version: "ok" succeeded, "failed",
// "running".
func pruneRun(ordinal int, op contract.Operation, version, state string) *RunRecord {
	return &RunRecord{Namespace: "team-a", Name: fmt.Sprintf("%s-%s-%d", op, version, ordinal), Op: op, Version: version,
		Ordinal: ordinal, Done: state != "running", Succeeded: state == "ok"}
}

func names(runs []*RunRecord) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}

// failures are n failed runs of op at version, numbered from first.
func failures(first, n int, op contract.Operation, version string) []*RunRecord {
	var out []*RunRecord
	for i := range n {
		out = append(out, pruneRun(first+i, op, version, "failed"))
	}
	return out
}

func TestPrunable(t *testing.T) {
	noBackoff := Backoff{Base: time.Second, Max: time.Second} // one failure is all it counts
	cases := []struct {
		name     string
		runs     []*RunRecord
		keep     int
		backoff  Backoff
		deleting bool
		want     []string
	}{{
		name: "0 keeps everything",
		runs: append(failures(1, 5, contract.OperationCreate, "v1"), pruneRun(6, contract.OperationCreate, "v1", "ok")),
		keep: 0, backoff: noBackoff,
		want: []string{},
	}, {
		name: "fewer than keep",
		runs: []*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "failed"), pruneRun(2, contract.OperationCreate, "v1", "ok")},
		keep: 3, backoff: noBackoff,
		want: []string{},
	}, {
		name: "failed attempts before a success: the newest keep of the operation stay",
		runs: append(failures(1, 5, contract.OperationCreate, "v1"), pruneRun(6, contract.OperationCreate, "v1", "ok")),
		keep: 2, backoff: noBackoff,
		want: []string{"create-v1-4", "create-v1-3", "create-v1-2", "create-v1-1"},
	}, {
		name: "each operation counts on its own",
		runs: []*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok"), pruneRun(2, contract.OperationUpdate, "v2", "ok"), pruneRun(3, contract.OperationUpdate, "v3", "ok"),
			pruneRun(4, contract.OperationUpdate, "v4", "ok")},
		keep: 1, backoff: noBackoff,
		want: []string{"update-v3-3", "update-v2-2"},
	}, {
		name: "the newest succeeded create or update is the record: kept past keep",
		runs: append([]*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok"), pruneRun(2, contract.OperationUpdate, "v2", "ok")},
			failures(3, 3, contract.OperationUpdate, "v3")...),
		keep: 2, backoff: noBackoff,
		want: []string{"update-v3-3"},
	}, {
		name: "the record kept when it is an old create behind many failed updates",
		runs: append([]*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok")}, failures(2, 4, contract.OperationUpdate, "v2")...),
		keep: 1, backoff: noBackoff,
		want: []string{"update-v2-4", "update-v2-3", "update-v2-2"},
	}, {
		name: "a run not done is never pruned and does not count",
		runs: []*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok"), pruneRun(2, contract.OperationUpdate, "v2", "failed"), pruneRun(3, contract.OperationUpdate, "v2", "failed"),
			pruneRun(4, contract.OperationUpdate, "v2", "running")},
		keep: 1, backoff: noBackoff,
		want: []string{"update-v2-2"},
	}, {
		name: "the failures the backoff counts are kept (7 with 10 s doubled up to 10 min)",
		runs: failures(1, 9, contract.OperationCreate, "v1"),
		keep: 3, backoff: Backoff{Base: 10 * time.Second, Max: 10 * time.Minute},
		want: []string{"create-v1-2", "create-v1-1"},
	}, {
		name: "once the operation succeeded, its failures are not counted",
		runs: append(failures(1, 9, contract.OperationCreate, "v1"), pruneRun(10, contract.OperationCreate, "v1", "ok")),
		keep: 3, backoff: Backoff{Base: 10 * time.Second, Max: 10 * time.Minute},
		want: []string{"create-v1-7", "create-v1-6", "create-v1-5", "create-v1-4", "create-v1-3", "create-v1-2", "create-v1-1"},
	}, {
		name: "a retry running: the failures before it are still counted",
		runs: append(failures(1, 9, contract.OperationCreate, "v1"), pruneRun(10, contract.OperationCreate, "v1", "running")),
		keep: 3, backoff: Backoff{Base: 10 * time.Second, Max: 10 * time.Minute},
		want: []string{"create-v1-2", "create-v1-1"},
	}, {
		name: "failures of an older version are not counted by the backoff",
		runs: append(failures(1, 3, contract.OperationCreate, "v1"), failures(4, 5, contract.OperationCreate, "v2")...),
		keep: 2, backoff: Backoff{Base: 10 * time.Second, Max: 10 * time.Minute},
		want: []string{"create-v1-3", "create-v1-2", "create-v1-1"},
	}, {
		name: "deleting: the newest succeeded delete and the record stay",
		runs: append(append([]*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok")}, failures(2, 4, contract.OperationDelete, "v1")...),
			pruneRun(6, contract.OperationDelete, "v1", "ok")),
		keep: 1, backoff: noBackoff, deleting: true,
		want: []string{"delete-v1-5", "delete-v1-4", "delete-v1-3", "delete-v1-2"},
	}, {
		name: "deleting: the failures of a delete being retried are counted",
		runs: append([]*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "ok")}, failures(2, 4, contract.OperationDelete, "v1")...),
		keep: 1, backoff: Backoff{Base: time.Second, Max: 2 * time.Second}, deleting: true,
		want: []string{"delete-v1-3", "delete-v1-2"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, names(prunable(c.runs, c.keep, c.backoff, c.deleting)))
		})
	}
}

// What decide concludes survives pruning: the action, the backend record,
// the outcome (the backoff's wait) and the reason. Only the attempt number
// it reports stops growing at what the backoff counts.
func TestPruningKeepsTheDecision(t *testing.T) {
	for _, last := range []time.Duration{4 * time.Second, time.Hour} {
		o := observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v1", succeededAt("p-1", 3*time.Hour))}
			for i := 2; i <= 8; i++ {
				o.Runs = append(o.Runs, run(i, contract.OperationUpdate, "v2", failedAt("why", last+time.Duration(8-i)*time.Minute)))
			}
		})
		before := decide(o)
		pruned := map[*RunRecord]bool{}
		for _, r := range prunable(o.Runs, 1, o.Backoff, false) {
			pruned[r] = true
		}
		assert.Len(t, pruned, 3, "7 failures, 4 counted by a backoff of 10 s doubled up to 1 min")
		var rest []*RunRecord
		for _, r := range o.Runs {
			if !pruned[r] {
				rest = append(rest, r)
			}
		}
		o.Runs = rest
		after := decide(o)
		assert.Equal(t, before.Action.Kind, after.Action.Kind)
		assert.Equal(t, [3]any{before.Action.Op, before.Action.Version, before.Action.Ordinal},
			[3]any{after.Action.Op, after.Action.Version, after.Action.Ordinal})
		assert.Equal(t, before.Record, after.Record)
		assert.Equal(t, before.Outcome, after.Outcome)
		assert.Equal(t, before.Observed, after.Observed)
		assert.Equal(t, before.Report.Reason, after.Report.Reason)
	}
}

func TestUnneeded(t *testing.T) {
	runs := []*RunRecord{pruneRun(1, contract.OperationCreate, "v1", "failed"), pruneRun(2, contract.OperationCreate, "v1", "ok"), pruneRun(3, contract.OperationUpdate, "v2", "running"),
		pruneRun(4, contract.OperationDelete, "v1", "failed"), pruneRun(5, contract.OperationDelete, "v1", "ok")}
	assert.Equal(t, []string{"create-v1-1", "update-v2-3", "delete-v1-4"}, names(unneeded(runs)),
		"all but the record and the succeeded delete, which make decide release the resource again")
}

func TestBackoffSteps(t *testing.T) {
	assert.Equal(t, 7, Backoff{Base: 10 * time.Second, Max: 10 * time.Minute}.steps())
	assert.Equal(t, 2, Backoff{Base: 300 * time.Millisecond, Max: 600 * time.Millisecond}.steps())
	assert.Equal(t, 1, Backoff{Base: time.Second, Max: time.Second}.steps())
	assert.Equal(t, 1, Backoff{}.steps())
	for _, b := range []Backoff{{10 * time.Second, 10 * time.Minute}, {time.Second, 3 * time.Second}} {
		assert.Equal(t, b.Max, b.after(b.steps()))
		assert.Less(t, b.after(b.steps()-1), b.Max)
	}
}
