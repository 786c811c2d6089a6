package inflight

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the limit, in controller-runtime's registry (served on the
// operator's /metrics endpoint). docs/metrics.md lists them.
var (
	queuedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kfp_operations_queued",
		Help: "Resources waiting for room to start an operation, by Provider (namespace/name): it has maxOperationsInFlight in flight.",
	}, []string{"provider"})
	inFlightGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kfp_operations_in_flight",
		Help: "Operation PipelineRuns not yet ended, by Provider (namespace/name), as last counted when a resource asked to start one.",
	}, []string{"provider"})
	boundGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kfp_operations_bound",
		Help: "Operations in flight a Provider (namespace/name) may have now: at most maxOperationsInFlight; from 10, halved while its runs take more than operationSlowdownLimit times their fastest, raised by one for each run within it.",
	}, []string{"provider"})
)

func init() { metrics.Registry.MustRegister(queuedGauge, inFlightGauge, boundGauge) }
