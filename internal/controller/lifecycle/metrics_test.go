package lifecycle_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

// metricValues reads the operation metrics of pipelines from the registry
// /metrics serves: counters and gauges by name and labels, and the sample
// count and sum of the histograms.
func metricValues(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	values := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] != "pipeline" {
				continue
			}
			key := f.GetName() + "{" + labels["operation"] + labels["result"] + labels["ready_reason"] + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				values[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				values[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				values[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
				values[key+"_sum"] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return values
}

// delta is after − before for every metric either has.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			d[k] = -v
		}
	}
	return d
}

func TestOperationMetrics(t *testing.T) {
	f := fixture.Setup(t, cp)
	before := metricValues(t)
	p := fixture.NewPipeline(f.NS, "measured")
	require.NoError(t, cp.Client.Create(ctx, p))
	first := f.EventuallyRun(t, p, 1, contract.OperationCreate)
	f.Finish(t, first, true, "", "quota exceeded", "")
	f.Eventually(t, p, fixture.ReadyMessageContains(p, "quota exceeded"))
	second := f.EventuallyRun(t, p, 2, contract.OperationCreate)
	f.Finish(t, second, true, "pipeline-1", "", "")
	f.Eventually(t, p, fixture.ReadyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))

	// Each finished run is seen by many reconciles: wait for them to settle,
	// then expect each counted once.
	var got map[string]float64
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got = delta(before, metricValues(t))
		assert.Equal(c, 2.0, got["kfp_operations_started_total{create}"])
		assert.Equal(c, 1.0, got["kfp_operations_finished_total{createfailed}"])
		assert.Equal(c, 1.0, got["kfp_operations_finished_total{createsucceeded}"])
	}, fixture.Wait, fixture.Tick)
	assert.Equal(t, 2.0, got["kfp_operation_duration_seconds{create}_count"])
	assert.Equal(t, 1.0, got["kfp_operation_attempts{create}_count"])
	assert.Equal(t, 2.0, got["kfp_operation_attempts{create}_sum"], "succeeded at the second attempt")
	for k, v := range got {
		if !strings.HasPrefix(k, "kfp_resources{") {
			assert.Contains(t, []string{"kfp_operations_started_total{create}", "kfp_operations_finished_total{createfailed}",
				"kfp_operations_finished_total{createsucceeded}", "kfp_operation_duration_seconds{create}_count",
				"kfp_operation_duration_seconds{create}_sum", "kfp_operation_attempts{create}_count",
				"kfp_operation_attempts{create}_sum"}, k, "moved by %v", v)
		}
	}
	assert.GreaterOrEqual(t, got["kfp_operation_duration_seconds{create}_sum"], 0.0)
	gaugeMatchesCluster(t)
	// All five are in the registry the operator's /metrics endpoint serves.
	n, err := testutil.GatherAndCount(metrics.Registry, "kfp_operations_started_total", "kfp_operations_finished_total",
		"kfp_operation_duration_seconds", "kfp_operation_attempts", "kfp_resources")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 5)

	// Deleting it: a delete operation, and the resource leaves the gauge
	// (gaugeMatchesCluster no longer finds it).
	before = metricValues(t)
	require.NoError(t, cp.Client.Delete(ctx, p))
	f.Finish(t, f.EventuallyRun(t, p, 3, contract.OperationDelete), true, "", "", "")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p))
	}, fixture.Wait, fixture.Tick)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got = delta(before, metricValues(t))
		assert.Equal(c, 1.0, got["kfp_operations_started_total{delete}"])
		assert.Equal(c, 1.0, got["kfp_operations_finished_total{deletesucceeded}"])
	}, fixture.Wait, fixture.Tick)
	assert.Equal(t, 1.0, got["kfp_operation_attempts{delete}_sum"])
	gaugeMatchesCluster(t)
}

// gaugeMatchesCluster waits for kfp_resources{kind="pipeline"} to count
// the Pipelines there are by Ready reason: resources of earlier tests are
// reconciled (and may change) too, so the gauge is checked against them all.
func gaugeMatchesCluster(t *testing.T) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list := &pipelinesv1beta1.PipelineList{}
		require.NoError(c, cp.Client.List(ctx, list))
		want := map[string]float64{}
		for i := range list.Items {
			if cond := fixture.Condition(&list.Items[i], pipelinesv1beta1.ConditionReady); cond != nil {
				want["kfp_resources{"+cond.Reason+"}"]++
			}
		}
		have := map[string]float64{}
		for k, v := range metricValues(t) {
			if strings.HasPrefix(k, "kfp_resources{") && v != 0 {
				have[k] = v
			}
		}
		assert.Equal(c, want, have)
	}, fixture.Wait, fixture.Tick)
}
