package completion

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// droppedEvents counts completion events dropped undelivered because a
// resource's outbox was full: each is an event some sink never received.
var droppedEvents = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "kfp_tekton_operator_cloudevents_dropped_total",
	Help: "Run-completion CloudEvents dropped undelivered because a resource already held the most pending events it may.",
})

func init() { metrics.Registry.MustRegister(droppedEvents) }
