package publish

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Delivery metrics, in controller-runtime's registry (served on the
// operator's /metrics endpoint).
var (
	deliveredTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_tekton_operator_cloudevents_delivered_total",
		Help: "Run-completion CloudEvents a sink acknowledged (2xx), by sink; a redelivery after a crash counts again.",
	}, []string{"sink"})
	deliveryFailuresTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_tekton_operator_cloudevents_delivery_failures_total",
		Help: "Failed attempts to deliver a run-completion CloudEvent (non-2xx answer or transport error), by sink.",
	}, []string{"sink"})
	sinkConsecutiveFailures = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kfp_tekton_operator_cloudevent_sink_consecutive_failures",
		Help: "The longest current run of failed deliveries to the sink for any one resource still holding undelivered events, in this operator process; 0 once every such resource's last attempt succeeded.",
	}, []string{"sink"})
	forgedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kfp_tekton_operator_cloudevents_refused_total",
		Help: "Pending run-completion events dropped unsent because the operator did not queue them (their seal does not verify: written into a status by someone else).",
	})
)

func init() {
	metrics.Registry.MustRegister(deliveredTotal, deliveryFailuresTotal, sinkConsecutiveFailures, forgedTotal)
}
