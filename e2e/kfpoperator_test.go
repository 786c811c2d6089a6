//go:build e2e

package e2e

// kfp-operator's provider services as they behave, not as this project's
// own fixture would like them to: the fixture provider service in mode
// kfp-operator answers a run create with one id (<ns>-<name>, as
// kfp-operator's Vertex AI service does) and posts the completion, once and
// never again, with another (<ns>-<name>-<version>, the pipeline job's),
// as soon as it has answered: before the operator can have recorded the
// create's id. It records every triggerIndicator it receives.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kfpOperatorService installs Provider "kfp" in ns as the fixture service
// with kfp-operator's id behaviour.
func kfpOperatorService(t *testing.T, ns string) {
	t.Helper()
	serviceProvider(t, ns, "--set", "provider.parameters.fixtureMode=kfp-operator")
}

// receivedTrigger is a run or runschedule create or update as the fixture
// service logged it.
type receivedTrigger struct {
	Method, Kind, Name string
	Indicator          *struct{ Type, Source, SourceNamespace string } `json:"triggerIndicator"`
}

// triggersReceived are the creates and updates the service in ns logged.
func triggersReceived(t *testing.T, ns string) []receivedTrigger {
	t.Helper()
	var out []receivedTrigger
	sc := bufio.NewScanner(strings.NewReader(serviceLog(t, ns)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string          `json:"msg"`
			Trigger receivedTrigger `json:"trigger"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "trigger" {
			out = append(out, line.Trigger)
		}
	}
	return out
}

// triggerOf is the indicator the service received with the create of kind
// name (namespace/name), if any.
func triggerOf(received []receivedTrigger, kind, name string) string {
	for _, r := range received {
		if r.Kind == kind && r.Method == http.MethodPost && r.Name == name && r.Indicator != nil {
			return r.Indicator.Type + " " + r.Indicator.Source + " " + r.Indicator.SourceNamespace
		}
	}
	return "none"
}

func completed(t *testing.T, ns, run string) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	waitFor(t, 4*time.Minute, "Run "+run+" completed", func() (bool, string) {
		obj = get(t, "Run", ns, run)
		state, msg := completionState(obj)
		return state == "Succeeded", state + ": " + msg
	})
	return obj
}

func runsTriggeredBy(t *testing.T, ns, trigger string) []string {
	var names []string
	for _, r := range list(t, ns, "Run") {
		if r.GetLabels()["pipelines.kubeflow.org/trigger"] == trigger {
			names = append(names, r.GetName())
		}
	}
	return names
}

func TestKfpOperatorServiceIDsAndEarlyCompletions(t *testing.T) {
	ns := namespace(t, "e2e-kfpop")
	kfpOperatorService(t, ns)
	for _, name := range []string{"examples-pipeline", "report-pipeline"} {
		fixturePipeline(t, ns, name)
	}
	create(t, ns, "kind: Experiment\nmetadata: {name: penguins}\nspec: {provider: kfp, description: kfp-operator ids}\n")

	// A Run by hand: its completion carries another id, and came before the create's was recorded.
	create(t, ns, "kind: Run\nmetadata: {name: one-off}\nspec: {provider: kfp, pipeline: examples-pipeline, experimentName: penguins}\n")
	run := completed(t, ns, "one-off")
	_, msg := completionState(run)
	assert.Contains(t, msg, "backend run "+ns+"-one-off-", "completed by the completion's run id, not the create's")
	// The create's answer is recorded after the completion it came later than.
	waitFor(t, time.Minute, "the create's answer recorded as the Run's backend id", func() (bool, string) {
		created, _, _ := unstructured.NestedString(get(t, "Run", ns, "one-off").Object, "status", "provider", "id")
		return created == ns+"-one-off", created
	})
	state, _ := completionState(get(t, "Run", ns, "one-off"))
	assert.Equal(t, "Succeeded", state, "recording the create's id keeps the completion")
	log := serviceLog(t, ns)
	assert.Contains(t, log, `"outcome":"delivered"`, "the service's single post was taken")
	assert.NotContains(t, log, `"status":409`, "no completion was refused as early")
	assert.NotContains(t, log, `"status":410`, "no completion was refused as another run's")

	// A dependency chain: examples' on-change Run completes the same way; report fires once.
	reportOnExamples(t, ns, "report-pipeline")
	create(t, ns, `
kind: RunConfiguration
metadata: {name: examples}
spec:
  run:
    provider: kfp
    pipeline: examples-pipeline
    artifacts: [{name: model, path: "train:model:0[pushed == 1]"}]
  triggers:
    onChange: [runSpec]
`)
	downstream := triggeredRunSucceeds(t, ns, "report triggered by examples' run", 4*time.Minute)
	upstream := runsTriggeredBy(t, ns, "onChange-runSpec")
	require.Len(t, upstream, 1)
	rc := get(t, "RunConfiguration", ns, "examples")
	latest, _, _ := unstructured.NestedString(rc.Object, "status", "latestRuns", "succeeded", "providerId")
	assert.True(t, strings.HasPrefix(latest, ns+"-"+upstream[0]+"-"), "examples' latest run is the completion's id, not the create's: %s", latest)
	assert.Contains(t, serviceLog(t, ns), `"model_uri":"mem://`+latest+`/train/model"`, "report's run got examples' model")
	time.Sleep(10 * time.Second)
	assert.Len(t, runsTriggeredBy(t, ns, "runConfiguration"), 1, "one upstream completion, one dependant run")

	// Scheduled: a RunSchedule's create carries the schedule indicator.
	create(t, ns, `
kind: RunConfiguration
metadata: {name: nightly}
spec:
  run: {provider: kfp, pipeline: examples-pipeline}
  triggers:
    schedules: [{cronExpression: "0 3 * * *"}]
`)
	var schedule string
	waitFor(t, 3*time.Minute, "nightly's RunSchedule synchronised", func() (bool, string) {
		for _, rs := range list(t, ns, "RunSchedule") {
			if ok, _ := synchronised(&rs); ok {
				schedule = rs.GetName()
				return true, ""
			}
		}
		return false, "none yet"
	})

	received := triggersReceived(t, ns)
	for _, tc := range []struct{ what, kind, name, want string }{
		{"a Run made by hand", "run", ns + "/one-off", "  "},
		{"an on-change run", "run", ns + "/" + upstream[0], "onChangeRunSpec examples " + ns},
		{"a dependency-triggered run", "run", ns + "/" + downstream, "runConfiguration examples " + ns},
		{"a schedule", "runschedule", ns + "/" + schedule, "schedule " + schedule + " " + ns},
	} {
		assert.Equal(t, tc.want, triggerOf(received, tc.kind, tc.name), tc.what)
	}
}

// Completions for Runs that never come, posted by the Provider's own
// service account: each answered 410, nothing kept.
func TestEarlyCompletionsForRunsThatNeverComeKeepNothing(t *testing.T) {
	ns := namespace(t, "e2e-kfpop-flood")
	kfpOperatorService(t, ns)
	url, token := eventsURL(t), providerToken(t, ns, "kfp")
	before := len(list(t, ns, "Run"))
	for i := range 200 {
		code, msg := postEvent(t, url, token, fmt.Sprintf(`{"status":"succeeded","pipelineName":"%[1]s/p","runName":"%[1]s/never-%[2]d",
"runId":"%[1]s-never-%[2]d-v1","servingModelArtifacts":[],"pipelineComponents":[],"provider":"%[1]s/kfp"}`, ns, i))
		require.Equal(t, http.StatusGone, code, msg)
	}
	assert.Equal(t, before, len(list(t, ns, "Run")), "nothing made of them")
}
