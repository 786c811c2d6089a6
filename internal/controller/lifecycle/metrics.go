package lifecycle

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Metrics of operations, in controller-runtime's registry (served on the
// operator's /metrics endpoint). docs/metrics.md lists them.
var (
	operationsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_operations_started_total",
		Help: "PipelineRuns the operator created, by resource kind and operation (create, update, delete); each retry is one more.",
	}, []string{"kind", "operation"})
	operationsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_operations_finished_total",
		Help: "Operation PipelineRuns that finished, by kind, operation and result (succeeded, failed), each counted once.",
	}, []string{"kind", "operation", "result"})
	operationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kfp_operation_duration_seconds",
		Help:    "Seconds from an operation PipelineRun's creation to its completion, by kind and operation.",
		Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"kind", "operation"})
	operationAttempts = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kfp_operation_attempts",
		Help:    "The attempt (1 = the first) at which an operation succeeded, by kind and operation.",
		Buckets: []float64{1, 2, 3, 4, 5, 10, 20},
	}, []string{"kind", "operation"})
	resourcesByReason = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kfp_resources",
		Help: "Resources this operator reconciles, by kind and the reason of their Ready condition.",
	}, []string{"kind", "ready_reason"})
)

func init() {
	metrics.Registry.MustRegister(operationsStarted, operationsFinished, operationDuration, operationAttempts, resourcesByReason)
}

// processStart: runs finished before it were counted by an earlier process
// (or never will be); only runs finished since count.
var processStart = time.Now().Truncate(time.Second)

// runStarted counts a PipelineRun created for an operation.
func runStarted(kind string, op contract.Operation) {
	operationsStarted.WithLabelValues(kind, string(op)).Inc()
}

// runObserved counts pr finished, the first time any reconcile sees it done.
func runObserved(kind string, pr *tektonv1.PipelineRun) {
	if !pr.IsDone() {
		return
	}
	done := finishedAt(pr)
	if !finishedRuns.first(pr.UID, done) {
		return
	}
	op := pr.Labels[contract.LabelOperation]
	result := "failed"
	if isSuccess(pr) {
		result = "succeeded"
		attempt, _ := strconv.Atoi(pr.Labels[contract.LabelAttempt])
		operationAttempts.WithLabelValues(kind, op).Observe(float64(attempt + 1))
	}
	operationsFinished.WithLabelValues(kind, op, result).Inc()
	operationDuration.WithLabelValues(kind, op).Observe(max(done.Sub(createdAt(pr)), 0).Seconds())
}

// finishedRuns are the runs counted as finished.
var finishedRuns = &countedRuns{cutoff: processStart, seen: map[types.UID]time.Time{}}

// maxCountedRuns bounds the run UIDs remembered as counted.
const maxCountedRuns = 10000

// countedRuns remembers which finished runs were counted: every run that
// finished at or before cutoff, and those in seen. When seen is full, its
// older half is forgotten and cutoff moves past it, so memory stays bounded;
// only a run that finished before then and was never seen goes uncounted.
type countedRuns struct {
	mu     sync.Mutex
	cutoff time.Time
	seen   map[types.UID]time.Time
}

// first says whether the run uid, finished at done, is not counted yet,
// and remembers it as counted.
func (c *countedRuns) first(uid types.UID, done time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[uid]; ok || done.Before(c.cutoff) {
		return false
	}
	if len(c.seen) >= maxCountedRuns {
		times := make([]time.Time, 0, len(c.seen))
		for _, t := range c.seen {
			times = append(times, t)
		}
		slices.SortFunc(times, time.Time.Compare)
		c.cutoff = times[len(times)/2].Add(time.Nanosecond)
		for id, t := range c.seen {
			if t.Before(c.cutoff) {
				delete(c.seen, id)
			}
		}
		if done.Before(c.cutoff) {
			return false
		}
	}
	c.seen[uid] = done
	return true
}

// readiness is the Ready reason of every resource of each kind, by
// namespace/name (what a reconcile of a resource gone still knows), that the
// kfp_resources gauge counts.
var readiness = &reasons{of: map[string]map[types.NamespacedName]string{}}

type reasons struct {
	mu sync.Mutex
	of map[string]map[types.NamespacedName]string
}

// statusWritten records obj's Ready reason as just written.
func statusWritten(kind string, obj Subject) {
	reason := ""
	if c := meta.FindStatusCondition(obj.CommonStatus().Conditions, pipelinesv1beta1.ConditionReady); c != nil {
		reason = c.Reason
	}
	readiness.set(kind, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, reason)
}

// resourceGone forgets a resource released or deleted.
func resourceGone(kind string, key types.NamespacedName) { readiness.set(kind, key, "") }

// set records key's reason ("" forgets key) and moves the gauge.
func (r *reasons) set(kind string, key types.NamespacedName, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byKey := r.of[kind]
	if byKey == nil {
		byKey = map[types.NamespacedName]string{}
		r.of[kind] = byKey
	}
	old, had := byKey[key]
	if had && old == reason {
		return
	}
	if had {
		resourcesByReason.WithLabelValues(kind, old).Dec()
		delete(byKey, key)
	}
	if reason != "" {
		byKey[key] = reason
		resourcesByReason.WithLabelValues(kind, reason).Inc()
	}
}
