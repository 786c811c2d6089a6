package runcompletion

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Pending is the outbox entry publishing data to sinks.
func Pending(data EventData, now metav1.Time, sinks []string) (pipelinesv1beta1.PendingCompletionEvent, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return pipelinesv1beta1.PendingCompletionEvent{}, err
	}
	if len(raw) > pipelinesv1beta1.MaxCompletionEventData {
		return pipelinesv1beta1.PendingCompletionEvent{}, fmt.Errorf("event data has %d bytes, more than the %d a status holds",
			len(raw), pipelinesv1beta1.MaxCompletionEventData)
	}
	return pipelinesv1beta1.PendingCompletionEvent{
		ID: data.RunID, Source: data.Provider.String(), Time: now, Data: string(raw), Sinks: slices.Clone(sinks),
	}, nil
}

// Enqueue adds ev to the outbox unless an event of its id is pending or
// was published. When the outbox is full the oldest pending event is
// dropped and returned.
func Enqueue(box *pipelinesv1beta1.CompletionEvents, ev pipelinesv1beta1.PendingCompletionEvent) (added bool, dropped *pipelinesv1beta1.PendingCompletionEvent) {
	if len(ev.Sinks) == 0 || slices.Contains(box.Published, ev.ID) ||
		slices.ContainsFunc(box.Pending, func(p pipelinesv1beta1.PendingCompletionEvent) bool { return p.ID == ev.ID }) {
		return false, nil
	}
	if len(box.Pending) >= pipelinesv1beta1.MaxPendingCompletionEvents {
		oldest := box.Pending[0]
		dropped = &oldest
		box.Pending = slices.Delete(box.Pending, 0, 1)
	}
	box.Pending = append(box.Pending, ev)
	return true, dropped
}

// Delivered records that sink took event id; an event every sink took
// moves to Published. It reports whether the outbox changed.
func Delivered(box *pipelinesv1beta1.CompletionEvents, id, sink string) bool {
	i := slices.IndexFunc(box.Pending, func(p pipelinesv1beta1.PendingCompletionEvent) bool { return p.ID == id })
	if i < 0 {
		return false
	}
	ev := &box.Pending[i]
	j := slices.Index(ev.Sinks, sink)
	if j < 0 {
		return false
	}
	ev.Sinks = slices.Delete(ev.Sinks, j, j+1)
	if len(ev.Sinks) == 0 {
		box.Pending = slices.Delete(box.Pending, i, i+1)
		publish(box, id)
	}
	return true
}

// DropUnless removes the pending events keep refuses, without publishing
// them, and returns them.
func DropUnless(box *pipelinesv1beta1.CompletionEvents, keep func(*pipelinesv1beta1.PendingCompletionEvent) bool) []pipelinesv1beta1.PendingCompletionEvent {
	var dropped []pipelinesv1beta1.PendingCompletionEvent
	kept := box.Pending[:0]
	for i := range box.Pending {
		if keep(&box.Pending[i]) {
			kept = append(kept, box.Pending[i])
		} else {
			dropped = append(dropped, box.Pending[i])
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	box.Pending = kept
	return dropped
}

// Retain forgets sinks no longer configured; an event left with no sink
// counts as published. It reports whether the outbox changed.
func Retain(box *pipelinesv1beta1.CompletionEvents, configured []string) bool {
	changed := false
	kept := box.Pending[:0]
	for _, ev := range box.Pending {
		n := len(ev.Sinks)
		ev.Sinks = slices.DeleteFunc(ev.Sinks, func(s string) bool { return !slices.Contains(configured, s) })
		changed = changed || len(ev.Sinks) != n
		if len(ev.Sinks) == 0 {
			publish(box, ev.ID)
			continue
		}
		kept = append(kept, ev)
	}
	if len(kept) == 0 {
		kept = nil
	}
	box.Pending = kept
	return changed
}

func publish(box *pipelinesv1beta1.CompletionEvents, id string) {
	box.Published = append(box.Published, id)
	if over := len(box.Published) - pipelinesv1beta1.MaxPublishedCompletionEvents; over > 0 {
		box.Published = slices.Delete(box.Published, 0, over)
	}
	if len(box.Pending) == 0 {
		box.Pending = nil
	}
}
