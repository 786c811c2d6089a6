package publish

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
)

// Backoff is how long a resource waits before trying a failing sink again:
// Base after the first failure, doubling with each further one, at most Max.
type Backoff struct{ Base, Max time.Duration }

// Default backoff.
const (
	DefaultBackoffBase = 2 * time.Second
	DefaultBackoffMax  = 5 * time.Minute
)

// after is the wait following the failures-th consecutive failure.
func (b Backoff) after(failures int) time.Duration {
	d := b.Base
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// failingThreshold is how many consecutive failures of a sink turn the
// CompletionEventsDelivered condition False: one or two are blips.
const failingThreshold = 3

// maxConditionMessage bounds the condition message; a sink's error may
// carry its whole response body.
const maxConditionMessage = 512

// sinkFailure is a sink's run of consecutive failures on one resource.
type sinkFailure struct {
	count     int
	lastError string
	retryAt   time.Time
}

// backingOff are the sinks not to try before their retry time.
func backingOff(failing map[string]sinkFailure, now time.Time) map[string]bool {
	skip := map[string]bool{}
	for sink, f := range failing {
		if now.Before(f.retryAt) {
			skip[sink] = true
		}
	}
	return skip
}

// nextAttempt is how long until some sink still owed an event is due again;
// a sink with no recorded failure is due at once, waiting at least floor so
// an unexpected state never spins.
func nextAttempt(pending []pipelinesv1beta1.PendingCompletionEvent, failing map[string]sinkFailure, now time.Time, floor time.Duration) time.Duration {
	earliest := time.Time{}
	for _, ev := range pending {
		for _, sink := range ev.Sinks {
			due := now
			if f, ok := failing[sink]; ok {
				due = f.retryAt
			}
			if earliest.IsZero() || due.Before(earliest) {
				earliest = due
			}
		}
	}
	return max(earliest.Sub(now), floor)
}

// ending is how a round ends that left pending in the outbox: done once it
// is empty (an event queued later is a status change the watch sees), else
// waiting for the next sink due. Not an error: controller-runtime's own
// backoff would stack on ours.
func ending(pending []pipelinesv1beta1.PendingCompletionEvent, failing map[string]sinkFailure, now time.Time, floor time.Duration) outcome.Outcome {
	if len(pending) == 0 {
		return outcome.DoneOutcome()
	}
	return outcome.WaitFor(nextAttempt(pending, failing, now, floor))
}

// deliveredCondition is what CompletionEventsDelivered becomes, and whether
// that differs from current enough to write: only a change of status,
// reason or failing sink is written, never each retry.
//
// It is False while a sink has failed failingThreshold times in a row (the
// first such sink in configured order, so the one named stays put). It
// turns True again once the outbox is empty or the sink it names has
// succeeded; while that sink still fails, even fewer times than the
// threshold (as after a restart, which forgets counts), it stays False. A
// resource whose sinks never failed gets no condition.
func deliveredCondition(current *metav1.Condition, sinks []string, failing map[string]sinkFailure, outboxEmpty bool, generation int64) (metav1.Condition, bool) {
	if !outboxEmpty {
		for _, sink := range sinks {
			f, ok := failing[sink]
			if !ok || f.count < failingThreshold {
				continue
			}
			want := metav1.Condition{
				Type: pipelinesv1beta1.ConditionCompletionEventsDelivered, Status: metav1.ConditionFalse,
				Reason: pipelinesv1beta1.ReasonSinkFailing, ObservedGeneration: generation,
				Message: trimMessage(fmt.Sprintf("%sfailed %d consecutive deliveries, retrying with backoff; last error: %s",
					failingSinkPrefix(sink), f.count, f.lastError), maxConditionMessage),
			}
			unchanged := current != nil && current.Status == want.Status && current.Reason == want.Reason &&
				strings.HasPrefix(current.Message, failingSinkPrefix(sink))
			return want, !unchanged
		}
	}
	if current == nil || current.Status != metav1.ConditionFalse {
		return metav1.Condition{}, false
	}
	if !outboxEmpty {
		for _, sink := range sinks {
			if _, stillFailing := failing[sink]; stillFailing && strings.HasPrefix(current.Message, failingSinkPrefix(sink)) {
				return metav1.Condition{}, false
			}
		}
	}
	return metav1.Condition{
		Type: pipelinesv1beta1.ConditionCompletionEventsDelivered, Status: metav1.ConditionTrue,
		Reason: pipelinesv1beta1.ReasonEventsDelivered, ObservedGeneration: generation,
		Message: "the sinks are taking the completion events",
	}, true
}

// failingSinkPrefix starts the message naming a failing sink.
func failingSinkPrefix(sink string) string { return fmt.Sprintf("sink %q ", sink) }

// trimMessage cuts s to at most n bytes, on a rune boundary.
func trimMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
