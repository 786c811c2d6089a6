package measure

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePIDStatKeepsACommandWithParentheses(t *testing.T) {
	comm, sec := parsePIDStat("42 (kube (api) server) S 1 42 42 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 9 0 100 0 0")
	assert.Equal(t, "kube (api) server", comm)
	assert.InDelta(t, 3.80, sec, 1e-9)

	comm, sec = parsePIDStat("7 (short) S 1")
	assert.Equal(t, "short", comm)
	assert.Zero(t, sec)
}

func TestParseProcStatCountsIdleAndIOWaitAsNotBusy(t *testing.T) {
	busy, total := parseProcStat("cpu  100 10 50 800 40 5 5 0 0 0\ncpu0 50 5 25 400 20 2 3 0 0 0\n")
	assert.InDelta(t, 1.70, busy, 1e-9) // user nice system irq softirq steal
	assert.InDelta(t, 10.10, total, 1e-9)
}

func TestProcessNameIsThePodWithoutItsGeneratedSuffixes(t *testing.T) {
	env := func(kv ...string) string {
		s := ""
		for _, x := range kv {
			s += x + "\x00"
		}
		return s
	}
	for _, c := range []struct{ comm, environ, want string }{
		{"controller", env("HOSTNAME=tekton-pipelines-controller-7d9f8c6b5d-x2k4p", "KUBERNETES_SERVICE_HOST=10.96.0.1"), "tekton-pipelines-controller"},
		{"manager", env("KUBERNETES_SERVICE_HOST=10.96.0.1", "HOSTNAME=kfp-tekton-operator-5c4f9d7b8-abcde"), "kfp-tekton-operator"},
		{"etcd", env("HOSTNAME=node"), "etcd"},                              // the node's own process
		{"pause", "", "pause"},                                              // no environment to read
		{"kworker/u8:3-events_unbound", "", "kworker"},                      // a kernel worker, renamed per work item
		{"sh", env("KUBERNETES_SERVICE_HOST=x", "HOSTNAME=job-x"), "job-x"}, // no generated suffix to remove
	} {
		assert.Equal(t, c.want, processName(c.comm, c.environ), c.environ)
	}
}

func TestSinceCountsANewProcessWholeAndAReusedPIDAsNew(t *testing.T) {
	before := Machine{busy: 10, total: 40, procs: map[int]namedCPU{
		1: {"etcd", 5}, 2: {"kwok", 3}, 3: {"old", 9},
	}}
	after := Machine{busy: 25, total: 60, procs: map[int]namedCPU{
		1: {"etcd", 8}, 2: {"kwok", 4}, 3: {"new", 1.5}, 4: {"kwok", 2},
	}}
	s := after.Since(before)
	assert.Equal(t, 15.0, s.Busy)
	assert.Equal(t, 20.0, s.Total)
	assert.Equal(t, []CPUShare{{"etcd", 3}, {"kwok", 3}, {"new", 1.5}}, s.Shares)
	assert.Equal(t, "busy 15 of 20 CPU s (75 %); etcd 3.0 s; kwok 3.0 s; new 1.5 s", s.String())
	assert.Equal(t, 3.0, s.Of("kwok"))
	assert.Zero(t, s.Of("gone"))
}

func TestTakeMachineSeesThisProcess(t *testing.T) {
	m := TakeMachine()
	assert.Positive(t, m.total)
	_, ok := m.procs[os.Getpid()]
	assert.True(t, ok)
}

func TestAPIServerCountsGroupsByVerbResourceWatchAndWebhook(t *testing.T) {
	got, err := APIServerCounts(strings.NewReader(`# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",group="tekton.dev",resource="pipelineruns",scope="resource",subresource="status",verb="PATCH",version="v1"} 30
apiserver_request_total{code="409",component="apiserver",group="tekton.dev",resource="pipelineruns",scope="resource",subresource="status",verb="PATCH",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 5
apiserver_watch_events_total{group="",resource="pods",version="v1"} 6.1e+01
apiserver_admission_webhook_admission_duration_seconds_count{name="webhook.pipeline.tekton.dev",operation="UPDATE",rejected="false",type="admit"} 7
apiserver_admission_webhook_admission_duration_seconds_sum{name="webhook.pipeline.tekton.dev",operation="UPDATE",rejected="false",type="admit"} 0.5
apiserver_request_duration_seconds_count{verb="GET"} 99
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		"PATCH pipelineruns/status":                  32,
		"POST pods":                                  5,
		"watch events pods":                          61,
		"webhook webhook.pipeline.tekton.dev UPDATE": 7,
	}, got)

	_, err = APIServerCounts(strings.NewReader(`apiserver_request_total{verb="GET"} lots`))
	assert.ErrorContains(t, err, "lots")
}

func TestGrownKeepsOnlyWhatGrewLargestFirst(t *testing.T) {
	assert.Equal(t, []CountDelta{{"b", 5}, {"a", 2}, {"c", 2}},
		Grown(map[string]float64{"a": 1, "b": 1, "d": 4}, map[string]float64{"a": 3, "b": 6, "c": 2, "d": 4}))
	assert.Empty(t, Grown(nil, map[string]float64{"a": 3}), "a failed first read is not growth from zero")
	assert.Empty(t, Grown(map[string]float64{"a": 3}, nil))
}
