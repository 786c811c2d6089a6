package publish

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
)

func TestBackoffDoublesUpToMax(t *testing.T) {
	b := Backoff{Base: 2 * time.Second, Max: 5 * time.Minute}
	for failures, want := range map[int]time.Duration{
		1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 8: 256 * time.Second,
		9: 5 * time.Minute, 1000: 5 * time.Minute,
	} {
		assert.Equal(t, want, b.after(failures), "after %d failures", failures)
	}
	assert.Equal(t, time.Second, Backoff{Base: 3 * time.Second, Max: time.Second}.after(1), "never beyond Max")
}

func TestBackingOffSkipsSinksNotDue(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	skip := backingOff(map[string]sinkFailure{
		"waiting": {count: 2, retryAt: now.Add(time.Second)},
		"due":     {count: 5, retryAt: now},
		"overdue": {count: 1, retryAt: now.Add(-time.Minute)},
	}, now)
	assert.Equal(t, map[string]bool{"waiting": true}, skip)
}

func TestNextAttempt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	floor := 50 * time.Millisecond
	pending := func(sinks ...[]string) []pipelinesv1beta1.PendingCompletionEvent {
		var out []pipelinesv1beta1.PendingCompletionEvent
		for _, s := range sinks {
			out = append(out, pipelinesv1beta1.PendingCompletionEvent{ID: "e", Sinks: s})
		}
		return out
	}
	for name, tc := range map[string]struct {
		pending []pipelinesv1beta1.PendingCompletionEvent
		failing map[string]sinkFailure
		want    time.Duration
	}{
		"the soonest failing sink": {pending: pending([]string{"a"}, []string{"a", "b"}),
			failing: map[string]sinkFailure{"a": {retryAt: now.Add(4 * time.Second)}, "b": {retryAt: now.Add(time.Second)}},
			want:    time.Second},
		"failures of sinks owed nothing do not count": {pending: pending([]string{"a"}),
			failing: map[string]sinkFailure{"a": {retryAt: now.Add(4 * time.Second)}, "gone": {retryAt: now.Add(time.Millisecond)}},
			want:    4 * time.Second},
		"a sink without failures is due: the floor": {pending: pending([]string{"a", "b"}),
			failing: map[string]sinkFailure{"a": {retryAt: now.Add(4 * time.Second)}},
			want:    floor},
		"past retry times: the floor": {pending: pending([]string{"a"}),
			failing: map[string]sinkFailure{"a": {retryAt: now.Add(-time.Second)}},
			want:    floor},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, nextAttempt(tc.pending, tc.failing, now, floor))
		})
	}
}

func TestEnding(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	floor := 50 * time.Millisecond
	assert.Equal(t, outcome.DoneOutcome(), ending(nil, map[string]sinkFailure{"a": {count: 3}}, now, floor),
		"an empty outbox: done, whatever failed before")
	owed := []pipelinesv1beta1.PendingCompletionEvent{{ID: "e", Sinks: []string{"a"}}}
	assert.Equal(t, outcome.WaitFor(3*time.Second),
		ending(owed, map[string]sinkFailure{"a": {retryAt: now.Add(3 * time.Second)}}, now, floor), "waits for the sink due next")
	assert.Equal(t, outcome.WaitFor(floor), ending(owed, nil, now, floor), "a sink due now: the floor, never a spin")
}

func TestDeliveredCondition(t *testing.T) {
	sinks := []string{"audit", "ml"}
	failingSince := func(sink string) *metav1.Condition {
		return &metav1.Condition{Type: pipelinesv1beta1.ConditionCompletionEventsDelivered, Status: metav1.ConditionFalse,
			Reason: pipelinesv1beta1.ReasonSinkFailing, Message: `sink "` + sink + `" failed 3 consecutive deliveries, retrying with backoff; last error: HTTP 503`}
	}
	delivered := &metav1.Condition{Type: pipelinesv1beta1.ConditionCompletionEventsDelivered, Status: metav1.ConditionTrue,
		Reason: pipelinesv1beta1.ReasonEventsDelivered}
	fails := func(counts map[string]int) map[string]sinkFailure {
		out := map[string]sinkFailure{}
		for s, n := range counts {
			out[s] = sinkFailure{count: n, lastError: "HTTP 503 from http://" + s}
		}
		return out
	}
	for name, tc := range map[string]struct {
		current     *metav1.Condition
		failing     map[string]sinkFailure
		outboxEmpty bool
		write       bool
		status      metav1.ConditionStatus
		message     string // a part of it
	}{
		"no failures, no condition: none":         {failing: fails(nil)},
		"two failures are a blip":                 {failing: fails(map[string]int{"ml": 2})},
		"the third failure turns it False":        {failing: fails(map[string]int{"ml": 3}), write: true, status: metav1.ConditionFalse, message: `sink "ml" failed 3 consecutive deliveries`},
		"from True too":                           {current: delivered, failing: fails(map[string]int{"ml": 3}), write: true, status: metav1.ConditionFalse, message: "HTTP 503 from http://ml"},
		"further failures of the same sink: kept": {current: failingSince("ml"), failing: fails(map[string]int{"ml": 9})},
		"the first failing sink in configured order is named": {failing: fails(map[string]int{"ml": 7, "audit": 3}),
			write: true, status: metav1.ConditionFalse, message: `sink "audit"`},
		"another sink failing instead: renamed": {current: failingSince("ml"), failing: fails(map[string]int{"audit": 4}),
			write: true, status: metav1.ConditionFalse, message: `sink "audit"`},
		"the named sink recovered, another blips: True": {current: failingSince("ml"), failing: fails(map[string]int{"audit": 1}),
			write: true, status: metav1.ConditionTrue},
		"the named sink still fails, fewer times (a restart): kept": {current: failingSince("ml"), failing: fails(map[string]int{"ml": 1})},
		"no failures left: True":                                    {current: failingSince("ml"), failing: fails(nil), write: true, status: metav1.ConditionTrue},
		"outbox empty: True": {current: failingSince("ml"), failing: fails(map[string]int{"ml": 5}), outboxEmpty: true,
			write: true, status: metav1.ConditionTrue},
		"already True: kept":          {current: delivered, failing: fails(nil), outboxEmpty: true},
		"unconfigured sinks: ignored": {failing: fails(map[string]int{"retired": 10})},
	} {
		t.Run(name, func(t *testing.T) {
			got, write := deliveredCondition(tc.current, sinks, tc.failing, tc.outboxEmpty, 7)
			assert.Equal(t, tc.write, write)
			if !tc.write {
				return
			}
			assert.Equal(t, pipelinesv1beta1.ConditionCompletionEventsDelivered, got.Type)
			assert.Equal(t, tc.status, got.Status)
			assert.Equal(t, int64(7), got.ObservedGeneration)
			wantReason := pipelinesv1beta1.ReasonEventsDelivered
			if tc.status == metav1.ConditionFalse {
				wantReason = pipelinesv1beta1.ReasonSinkFailing
			}
			assert.Equal(t, wantReason, got.Reason)
			assert.Contains(t, got.Message, tc.message)
		})
	}
}

func TestConditionMessageIsTrimmed(t *testing.T) {
	failing := map[string]sinkFailure{"ml": {count: 3, lastError: "HTTP 502: " + strings.Repeat("ż", 2000)}}
	got, write := deliveredCondition(nil, []string{"ml"}, failing, false, 1)
	assert.True(t, write)
	assert.LessOrEqual(t, len(got.Message), maxConditionMessage)
	assert.True(t, utf8.ValidString(got.Message), "cut on a rune boundary")
	assert.True(t, strings.HasPrefix(got.Message, `sink "ml" failed 3`))
	assert.True(t, strings.HasSuffix(got.Message, "…"))
}
