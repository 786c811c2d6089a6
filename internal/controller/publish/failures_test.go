package publish

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
)

func TestFailuresCountPerResourceAndSink(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	b := Backoff{Base: time.Second, Max: time.Minute}
	run := resourceKey{kind: "Run", NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "train"}}
	rc := resourceKey{kind: "RunConfiguration", NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "train"}}
	gauge := func(sink string) float64 { return testutil.ToFloat64(sinkConsecutiveFailures.WithLabelValues(sink)) }
	f := newFailures()

	f.failed(run, "uid-1", "failures-test-a", errors.New("first"), now, b)
	got := f.failed(run, "uid-1", "failures-test-a", errors.New("HTTP 503"), now, b)
	assert.Equal(t, sinkFailure{count: 2, lastError: "HTTP 503", retryAt: now.Add(2 * time.Second)}, got)
	f.failed(rc, "uid-2", "failures-test-a", errors.New("refused"), now, b)
	assert.Equal(t, 2.0, gauge("failures-test-a"), "the longest run of failures across resources")
	assert.Len(t, f.current(rc, "uid-2"), 1, "a RunConfiguration of the same name is another resource")

	assert.Empty(t, f.current(run, "uid-new"), "a new Run of the same name starts afresh")
	f.failed(run, "uid-new", "failures-test-a", errors.New("x"), now, b)
	assert.Equal(t, 1, f.current(run, "uid-new")["failures-test-a"].count)
	assert.Equal(t, 1.0, gauge("failures-test-a"), "the old Run's failures are gone")

	f.succeeded(run, "uid-new", "failures-test-a")
	assert.Empty(t, f.current(run, "uid-new"))
	assert.Equal(t, 1.0, gauge("failures-test-a"), "the RunConfiguration's sink still fails")

	f.forget(rc)
	assert.Empty(t, f.current(rc, "uid-2"))
	assert.Equal(t, 0.0, gauge("failures-test-a"))
}
