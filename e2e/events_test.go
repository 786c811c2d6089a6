//go:build e2e

package e2e

// Run-completion events on the real cluster: every completion reaches a
// CloudEvent sink exactly once although the sink is down for a while and
// the operator restarts meanwhile; and /events takes a completion posted
// the way kfp-operator's provider services post it, with the Provider's
// service-account token, which triggers a dependent RunConfiguration.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/publish"
)

// sink is a CloudEvent sink on the node's address, which the operator's
// pods reach; while down it answers 503. The operator sends every sink
// every completion on the cluster (make demo's every-minute runs too): the
// sink keeps only those of its test's namespaces, and takes the others
// without a word, down or not, so they neither count nor hold up another's
// outbox.
type sink struct {
	URL  string
	down atomic.Bool
	ours map[string]bool // namespaces whose completions count (ownEvent)

	mu       sync.Mutex
	received map[string]int // by ce-id, this test's only
	data     map[string]string
	refused  int
	foreign  int // other namespaces' completions taken and dropped
}

// startSink starts a sink for the completions of namespaces (of the
// resources that held them or of their Providers: see ownEvent).
func startSink(t *testing.T, namespaces ...string) *sink {
	t.Helper()
	require.NotEmpty(t, namespaces, "a sink keeps the completions of its test's namespaces: name them")
	s := &sink{received: map[string]int{}, data: map[string]string{}, ours: map[string]bool{}}
	for _, ns := range namespaces {
		s.ours[ns] = true
	}
	ln, err := net.Listen("tcp", "10.200.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		if !ownEvent(r.Header.Get("Ce-"+publish.ResourceExtension), r.Header.Get("Ce-Source"), s.ours) {
			s.foreign++
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if s.down.Load() {
			s.refused++
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Ce-Type") != "org.kubeflow.pipelines.run-completion" || r.Header.Get("Ce-Specversion") != "1.0" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := r.Header.Get("Ce-Id")
		s.received[id]++
		s.data[id] = string(body)
		w.WriteHeader(http.StatusAccepted)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if n := s.snapshotForeign(); n > 0 {
			t.Logf("the sink took and left out %d completions of other namespaces than %v", n, namespaces)
		}
	})
	s.URL = "http://" + ln.Addr().String() + "/"
	return s
}

// snapshot is what the sink received of its namespaces' completions: the
// count and the data of each by CloudEvent id, and how many deliveries it
// refused while down.
func (s *sink) snapshot() (map[string]int, map[string]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	received, data := map[string]int{}, map[string]string{}
	for k, v := range s.received {
		received[k] = v
	}
	for k, v := range s.data {
		data[k] = v
	}
	return received, data, s.refused
}

func (s *sink) snapshotForeign() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.foreign
}

// withSink adds the sink to the operator's release's eventSinks until the
// test ends, beside any sink configured there already (a leftover "e2e"
// sink of an interrupted run excepted); then the release gets back the
// values it had.
func withSink(t *testing.T, s *sink) {
	t.Helper()
	saved := operatorUserValues(t)
	sinks := append(otherSinks(saved["eventSinks"]), map[string]any{"name": testSinkName, "url": s.URL})
	js, err := json.Marshal(sinks)
	require.NoError(t, err)
	restoreOperatorValuesAtCleanup(t, saved)
	upgradeOperator(t, "--reuse-values", "--set-json", "eventSinks="+string(js))
}

func pending(obj *unstructured.Unstructured) int {
	p, _, _ := unstructured.NestedSlice(obj.Object, "status", "completionEvents", "pending")
	return len(p)
}

func TestCompletionEventsSurviveASinkOutageAndARestart(t *testing.T) {
	ns := namespace(t, "e2e-events")
	s := startSink(t, ns)
	s.down.Store(true)
	withSink(t, s)
	tektonProvider(t, ns)
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	runs := []string{"ok-1", "ok-2", "fails"}
	for _, name := range runs {
		params := `[{name: rows, value: "100"}]`
		if name == "fails" {
			params = `[{name: rows, value: "5"}]` // generate refuses fewer than 10 rows
		}
		create(t, ns, fmt.Sprintf("kind: Run\nmetadata: {name: %s}\nspec: {provider: kfp, pipeline: demo-ml, parameters: %s}\n", name, params))
	}
	ids := map[string]string{}
	for _, name := range runs {
		waitFor(t, 6*time.Minute, "Run "+name+" completed", func() (bool, string) {
			r := get(t, "Run", ns, name)
			state, msg := completionState(r)
			ids[name], _, _ = unstructured.NestedString(r.Object, "status", "provider", "id")
			return state != "", msg
		})
	}
	waitFor(t, 2*time.Minute, "the failing sink shows in a Run's condition", func() (bool, string) {
		status, reason, msg := condition(get(t, "Run", ns, "ok-1"), "CompletionEventsDelivered")
		return status == "False" && reason == "SinkFailing" && strings.Contains(msg, testSinkName), status + " " + reason + ": " + msg
	})
	for _, name := range runs {
		assert.Equal(t, 1, pending(get(t, "Run", ns, name)), "Run %s holds its event while the sink is down", name)
	}

	// The operator restarts while the sink is still down.
	run(t, "kubectl", "delete", "pod", "-n", "kfp-tekton-operator", "-l", "app.kubernetes.io/name=kfp-tekton-operator", "--wait=false")
	run(t, "kubectl", "rollout", "status", "-n", "kfp-tekton-operator", "deploy/kfp-tekton-operator", "--timeout=180s")
	s.down.Store(false)
	back := time.Now()

	waitFor(t, 6*time.Minute, "every event delivered", func() (bool, string) {
		for _, name := range runs {
			if n := pending(get(t, "Run", ns, name)); n > 0 {
				return false, fmt.Sprintf("Run %s still holds %d", name, n)
			}
		}
		return true, ""
	})
	delivered := time.Since(back)
	time.Sleep(10 * time.Second) // a duplicate, if any, would arrive now
	received, data, refused := s.snapshot()
	for _, name := range runs {
		assert.Equal(t, 1, received[ids[name]], "Run %s's event (id %s) delivered exactly once", name, ids[name])
		assert.Contains(t, data[ids[name]], `"runName":"`+ns+"/"+name+`"`)
	}
	assert.Contains(t, data[ids["fails"]], `"status":"failed"`)
	assert.Contains(t, data[ids["ok-1"]], `"status":"succeeded"`)
	assert.Contains(t, data[ids["ok-1"]], `"name":"train"`, "the run's artifacts")
	status, reason, _ := condition(get(t, "Run", ns, "ok-1"), "CompletionEventsDelivered")
	assert.Equal(t, "True", status, reason)
	t.Logf("%d events refused while the sink was down; all %d delivered %.1f s after it came back, each once", refused, len(runs), delivered.Seconds())
}

func TestProviderServicePostsACompletionThatTriggersADependant(t *testing.T) {
	ns := namespace(t, "e2e-webhook")
	s := startSink(t, ns)
	withSink(t, s)
	postedChain(t, ns, func(manifest string) { create(t, ns, manifest) })
	url := eventsURL(t)
	token := providerToken(t, ns, "kfp")
	intruder := strings.TrimSpace(run(t, "kubectl", "create", "token", "default", "-n", ns, "--audience", "kfp-tekton-operator/"+ns+"/kfp"))

	// The path train:model:0[pushed == 1] takes the first model (kfp-operator picks by index, then filters).
	event := fmt.Sprintf(`{"status":"succeeded","pipelineName":"%[1]s/demo-ml","runConfigurationName":"%[1]s/examples",
"runId":"vertex-run-42","runStartTime":"2026-12-03T10:00:00Z","runEndTime":"2026-12-03T10:20:00Z","servingModelArtifacts":[],
"pipelineComponents":[{"name":"train","componentArtifacts":[{"name":"model","artifacts":[
{"uri":"gs://models/pushed-42","metadata":{"pushed":1}},{"uri":"gs://models/candidate","metadata":{"pushed":0}}]}]}],
"provider":"%[1]s/kfp"}`, ns)
	post := func(bearer string) (int, string) { return postEvent(t, url, bearer, event) }
	code, msg := post(intruder)
	assert.Equal(t, http.StatusForbidden, code, msg)
	waitFor(t, 3*time.Minute, "report synchronised", func() (bool, string) { return synchronised(get(t, "RunConfiguration", ns, "report")) })
	code, msg = post(token)
	require.Equal(t, http.StatusOK, code, msg)
	code, msg = post(token) // a provider service retrying
	require.Equal(t, http.StatusOK, code, msg)

	downstream := triggeredRunSucceeds(t, ns, "report triggered by the posted completion", 3*time.Minute)
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, downstream).Object, "status", "provider", "id")
	assert.Contains(t, tkn(t, "pipelinerun", "logs", id, "-n", ns), "model = gs://models/pushed-42", "the posted run's pushed model as the parameter")
	runs := 0
	for _, r := range list(t, ns, "Run") {
		if r.GetLabels()["pipelines.kubeflow.org/trigger"] == "runConfiguration" {
			runs++
		}
	}
	assert.Equal(t, 1, runs, "posted twice, triggered once")
	waitFor(t, 2*time.Minute, "the posted completion and report's run published", func() (bool, string) {
		received, _, _ := s.snapshot()
		return received["vertex-run-42"] == 1 && received[id] == 1, fmt.Sprint(received)
	})
}

// postedChain sets up, on the Tekton provider in ns, RunConfiguration
// examples, whose runs happen outside this cluster (only their completion is
// posted), made by createExamples, and report, triggered by each of them.
func postedChain(t *testing.T, ns string, createExamples func(manifest string)) {
	t.Helper()
	tektonProvider(t, ns)
	demoPipeline(t, ns, "consumer", "/consumer.yaml")
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	createExamples(`
kind: RunConfiguration
metadata: {name: examples}
spec:
  run:
    provider: kfp
    pipeline: demo-ml
    artifacts: [{name: model, path: "train:model:0[pushed == 1]"}]
`)
	reportOnExamples(t, ns, "consumer")
}

// eventsURL is where an operator pod serves /events.
func eventsURL(t *testing.T) string {
	t.Helper()
	var pods corev1.PodList
	require.NoError(t, cl.List(context.Background(), &pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": "kfp-tekton-operator"}))
	require.NotEmpty(t, pods.Items)
	return "http://" + pods.Items[0].Status.PodIP + ":8082/events"
}

// providerToken is a token of Provider ns/name's service account for the
// audience /events expects of its completions.
func providerToken(t *testing.T, ns, name string) string {
	t.Helper()
	sa, _, _ := unstructured.NestedString(get(t, "Provider", ns, name).Object, "spec", "serviceAccount")
	return strings.TrimSpace(run(t, "kubectl", "create", "token", sa, "-n", ns, "--audience", "kfp-tekton-operator/"+ns+"/"+name))
}

// postEvent posts a completion to /events as a provider service does.
func postEvent(t *testing.T, url, bearer, event string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(event))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// triggeredRunSucceeds waits for the Run a runConfigurations trigger starts
// in ns (what says why), then for it to succeed, and returns its name.
func triggeredRunSucceeds(t *testing.T, ns, what string, timeout time.Duration) string {
	t.Helper()
	var downstream string
	waitFor(t, timeout, what, func() (bool, string) {
		for _, r := range list(t, ns, "Run") {
			if r.GetLabels()["pipelines.kubeflow.org/trigger"] == "runConfiguration" {
				downstream = r.GetName()
				return true, ""
			}
		}
		return false, "no Run"
	})
	waitFor(t, 4*time.Minute, "the triggered Run "+downstream+" Succeeded", func() (bool, string) {
		state, msg := completionState(get(t, "Run", ns, downstream))
		return state == "Succeeded", state + ": " + msg
	})
	return downstream
}
