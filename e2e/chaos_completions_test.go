//go:build e2e && chaos

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// completionChaos is the part of the chaos suite whose runs complete: Runs
// of the demo pipeline through the Tekton provider (one of them fails), and
// a RunConfiguration chain (examples, scheduled every minute; report,
// triggered by each of examples' succeeded runs), all publishing their
// completions to a CloudEvent sink while the faults land.
type completionChaos struct {
	ns   string
	sink *sink
	refs []ref
}

func startCompletionChaos(t *testing.T, runs int) *completionChaos {
	t.Helper()
	c := &completionChaos{ns: namespace(t, "e2e-chaos-runs")}
	// The sink keeps this namespace's completions only: the cluster may run
	// others (make demo's every-minute RunConfiguration in team-a).
	c.sink = startSink(t, c.ns)
	c.sink.down.Store(true) // until the faults are over and the Runs completed: see sinkBack
	withSink(t, c.sink)
	tektonProvider(t, c.ns)
	demoPipeline(t, c.ns, "demo-ml", "/pipeline.yaml")
	demoPipeline(t, c.ns, "consumer", "/consumer.yaml")
	c.refs = append(c.refs, ref{c.ns, "Pipeline", "demo-ml"}, ref{c.ns, "Pipeline", "consumer"})
	reportOnExamples(t, c.ns, "consumer")
	examplesEveryMinute(t, c.ns)
	c.refs = append(c.refs, ref{c.ns, "RunConfiguration", "report"}, ref{c.ns, "RunConfiguration", "examples"})
	for i := range runs {
		rows := "100"
		if i == 0 {
			rows = "5" // generate refuses fewer than 10 rows: a failed completion
		}
		name := fmt.Sprintf("run-%d", i)
		create(t, c.ns, fmt.Sprintf("kind: Run\nmetadata: {name: %s}\nspec: {provider: kfp, pipeline: demo-ml, parameters: [{name: rows, value: %q}]}\n", name, rows))
		c.refs = append(c.refs, ref{c.ns, "Run", name})
	}
	return c
}

// sinkBack waits until the Runs created directly have completed, each
// holding its refused completion event, and then lets the sink take them.
func (c *completionChaos) sinkBack(t *testing.T) {
	t.Helper()
	waitFor(t, 10*time.Minute, "the Runs completed while the sink is down", func() (bool, string) {
		for _, r := range c.refs {
			if r.kind != "Run" {
				continue
			}
			obj := get(t, "Run", c.ns, r.name)
			if state, msg := completionState(obj); state == "" {
				return false, "Run " + r.name + " not completed: " + msg
			}
			if pending(obj) == 0 {
				return false, "Run " + r.name + " holds no event while the sink refuses it"
			}
		}
		return true, ""
	})
	c.sink.down.Store(false)
}

// check waits until a scheduled run of examples has succeeded and its
// completion was published, then stops examples' schedule (which deletes
// its runs: the operator's record, status.completionEvents.published, is
// what remains of them), waits until every run has completed and its
// completion event left the outbox, and then checks that the sink received
// each completion exactly once and nothing else, that no run of examples
// that had finished was left unrecorded, and that each succeeded run of
// examples triggered exactly one run of report.
func (c *completionChaos) check(t *testing.T) {
	t.Helper()
	var finished []string // examples' runs that had finished before its schedule went
	waitFor(t, 8*time.Minute, "a scheduled run of examples succeeded and published", func() (bool, string) {
		var l tektonv1.PipelineRunList
		require.NoError(t, cl.List(context.Background(), &l, client.InNamespace(c.ns), client.MatchingLabels{"pipelines.kubeflow.org/runconfiguration": "examples"}))
		published := c.published(t)
		finished = nil
		ok := false
		for i := range l.Items {
			state := succeededCondition(&l.Items[i])
			if state != "Unknown" {
				finished = append(finished, l.Items[i].Name)
			}
			ok = ok || state == "True" && published[l.Items[i].Name]
		}
		return ok, fmt.Sprintf("%d runs, %d finished, published %v", len(l.Items), len(finished), published)
	})
	patch(t, "RunConfiguration", c.ns, "examples", `{"spec":{"triggers":{"schedules":null}}}`)

	var runs []unstructured.Unstructured
	var published map[string]bool
	waitFor(t, 15*time.Minute, "every run completed and its completion event delivered", func() (bool, string) {
		for _, name := range []string{"examples", "report"} {
			if n := pending(get(t, "RunConfiguration", c.ns, name)); n > 0 {
				return false, fmt.Sprintf("RunConfiguration %s holds %d undelivered events", name, n)
			}
		}
		runs = list(t, c.ns, "Run")
		triggered := map[string]bool{}
		for _, r := range runs {
			triggered[r.GetLabels()["pipelines.kubeflow.org/trigger.source"]] = true
			if state, msg := completionState(&r); state == "" {
				_, why := readyIs(&r, "True")
				return false, "Run " + r.GetName() + " not completed: " + msg + why
			}
			if n := pending(&r); n > 0 {
				return false, fmt.Sprintf("Run %s holds %d undelivered events", r.GetName(), n)
			}
		}
		published = c.published(t)
		_, data, _ := c.sink.snapshot()
		for source := range succeededSources(published, data) {
			if !triggered[source] {
				return false, "no run of report yet for examples' run " + source
			}
		}
		return true, ""
	})
	time.Sleep(10 * time.Second) // a duplicate, if any, would arrive now

	received, data, refused := c.sink.snapshot()
	expected := map[string]bool{}
	succeeded := succeededSources(published, data)
	for id := range published {
		expected[id] = true
		assert.Equal(t, 1, received[id], "examples' run %s's completion delivered exactly once", id)
	}
	for _, name := range finished {
		assert.True(t, published[name], "examples' run %s had finished before its schedule went, and its completion was published", name)
	}
	failed, reports := 0, 0
	triggers := map[string]int{}
	for _, r := range runs {
		id, _, _ := unstructured.NestedString(r.Object, "status", "provider", "id")
		expected[id] = true
		assert.Equal(t, 1, received[id], "Run %s's completion (id %s) delivered exactly once", r.GetName(), id)
		if state, _ := completionState(&r); state == "Failed" {
			failed++
			assert.Contains(t, data[id], `"status":"failed"`, "Run %s", r.GetName())
		}
		if r.GetLabels()["pipelines.kubeflow.org/trigger"] == "runConfiguration" {
			reports++
			source := r.GetLabels()["pipelines.kubeflow.org/trigger.source"]
			triggers[source]++
			assert.True(t, succeeded[source], "Run %s was triggered by %s, a succeeded run of examples", r.GetName(), source)
		}
	}
	assert.GreaterOrEqual(t, failed, 1, "run-0 failed")
	for source := range succeeded {
		assert.Equal(t, 1, triggers[source], "examples' run %s triggered report once", source)
	}
	for id := range received { // this namespace's only: the sink left out the others'
		assert.True(t, expected[id], "the sink received an event for %s, which is no run here", id)
	}
	t.Logf("%d completions (%d Runs, %d of them failed and %d triggered by examples' %d succeeded runs; %d runs of examples recorded) each delivered exactly once; the sink refused %d deliveries",
		len(expected), len(runs), failed, reports, len(succeeded), len(published), refused)
}

// succeededSources are the trigger.source labels of the runs of report that
// examples' published runs which succeeded (so their event says) trigger.
func succeededSources(published map[string]bool, data map[string]string) map[string]bool {
	sources := map[string]bool{}
	for id := range published {
		if strings.Contains(data[id], `"status":"succeeded"`) {
			sources[examplesSource(id)] = true
		}
	}
	return sources
}

// published is the set of examples' completions the operator recorded
// every sink took.
func (c *completionChaos) published(t *testing.T) map[string]bool {
	t.Helper()
	ids, _, _ := unstructured.NestedStringSlice(get(t, "RunConfiguration", c.ns, "examples").Object, "status", "completionEvents", "published")
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return set
}
