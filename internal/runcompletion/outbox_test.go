package runcompletion

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func pending(id string, sinks ...string) pipelinesv1beta1.PendingCompletionEvent {
	return pipelinesv1beta1.PendingCompletionEvent{ID: id, Sinks: sinks}
}

func ids(box pipelinesv1beta1.CompletionEvents) []string {
	var out []string
	for _, p := range box.Pending {
		out = append(out, p.ID)
	}
	return out
}

func TestEnqueueNeverTwice(t *testing.T) {
	var box pipelinesv1beta1.CompletionEvents
	added, _ := Enqueue(&box, pending("a", "s1"))
	assert.True(t, added)
	added, _ = Enqueue(&box, pending("a", "s1"))
	assert.False(t, added, "pending already")
	require.True(t, Delivered(&box, "a", "s1"))
	assert.Empty(t, box.Pending)
	assert.Equal(t, []string{"a"}, box.Published)
	added, _ = Enqueue(&box, pending("a", "s1"))
	assert.False(t, added, "published already")
	added, _ = Enqueue(&box, pending("b"))
	assert.False(t, added, "no sink: nothing to queue")
}

func TestEnqueueDropsTheOldestWhenFull(t *testing.T) {
	var box pipelinesv1beta1.CompletionEvents
	for i := range pipelinesv1beta1.MaxPendingCompletionEvents {
		_, dropped := Enqueue(&box, pending(fmt.Sprint(i), "s"))
		require.Nil(t, dropped)
	}
	added, dropped := Enqueue(&box, pending("new", "s"))
	assert.True(t, added)
	require.NotNil(t, dropped)
	assert.Equal(t, "0", dropped.ID)
	assert.Len(t, box.Pending, pipelinesv1beta1.MaxPendingCompletionEvents)
	assert.Equal(t, "new", box.Pending[len(box.Pending)-1].ID)
}

func TestDeliveredPerSink(t *testing.T) {
	box := pipelinesv1beta1.CompletionEvents{Pending: []pipelinesv1beta1.PendingCompletionEvent{pending("a", "s1", "s2"), pending("b", "s2")}}
	assert.False(t, Delivered(&box, "a", "s3"), "not a sink of a")
	assert.False(t, Delivered(&box, "c", "s1"), "no such event")
	assert.True(t, Delivered(&box, "a", "s2"))
	assert.Equal(t, []string{"a", "b"}, ids(box), "a still waits for s1")
	assert.True(t, Delivered(&box, "b", "s2"))
	assert.True(t, Delivered(&box, "a", "s1"))
	assert.Nil(t, box.Pending)
	assert.Equal(t, []string{"b", "a"}, box.Published, "in delivery order")
}

func TestPublishedIsBounded(t *testing.T) {
	var box pipelinesv1beta1.CompletionEvents
	for i := range pipelinesv1beta1.MaxPublishedCompletionEvents + 5 {
		id := fmt.Sprint(i)
		Enqueue(&box, pending(id, "s"))
		Delivered(&box, id, "s")
	}
	assert.Len(t, box.Published, pipelinesv1beta1.MaxPublishedCompletionEvents)
	assert.Equal(t, "5", box.Published[0], "the oldest forgotten")
}

func TestRetainForgetsUnconfiguredSinks(t *testing.T) {
	box := pipelinesv1beta1.CompletionEvents{Pending: []pipelinesv1beta1.PendingCompletionEvent{pending("a", "gone"), pending("b", "gone", "kept")}}
	assert.True(t, Retain(&box, []string{"kept"}))
	assert.Equal(t, []string{"b"}, ids(box))
	assert.Equal(t, []string{"kept"}, box.Pending[0].Sinks)
	assert.Equal(t, []string{"a"}, box.Published)
	assert.False(t, Retain(&box, []string{"kept"}))
}

func TestPendingRefusesDataTooLargeForAStatus(t *testing.T) {
	big := make([]byte, pipelinesv1beta1.MaxCompletionEventData)
	for i := range big {
		big[i] = 'x'
	}
	_, err := Pending(EventData{RunID: string(big)}, metav1.Now(), []string{"s"})
	assert.ErrorContains(t, err, "more than the 32768")
	ev, err := Pending(EventData{Status: Succeeded, RunID: "id", Provider: NamespacedName{"team", "kfp"}}, metav1.Now(), []string{"s"})
	require.NoError(t, err)
	assert.Equal(t, "id", ev.ID)
	assert.Equal(t, "team/kfp", ev.Source)
}
