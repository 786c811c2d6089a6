package eventserver_test

// /events with the whole operator against a real API server: completions
// posted the way kfp-operator's provider services post them, with real
// service-account tokens checked by TokenReview.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

var ctx = context.Background()

const audience = "kfp-tekton-operator"

// events runs the operator with /events on a free port and one sink
// ("audit", never reachable here), and returns the fixture and the URL.
func events(t *testing.T) (*fixture.Fixture, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	f := fixture.SetupWithConfig(t, cp, fixture.Backoff, func(c *operator.Config) {
		c.EventsBindAddress, c.EventsTokenAudience = addr, audience
		c.EventSinks = []operator.EventSink{{Name: "audit", URL: "http://127.0.0.1:9/"}}
	})
	url := "http://" + addr + "/events"
	require.Eventually(t, func() bool {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, fixture.Wait, fixture.Tick, "/events listening")
	return f, url
}

// token is a token of service account ns/name for aud.
func token(t *testing.T, ns, name, aud string) string {
	cs, err := kubernetes.NewForConfig(cp.Config)
	require.NoError(t, err)
	expiry := int64(600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{aud}, ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

func post(t *testing.T, url, bearer, body string) (int, string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// runEvent is a completion as kfp-operator's provider services post it.
func runEvent(ns, run, id, status string) string {
	return fmt.Sprintf(`{"status":%q,"pipelineName":"%s/demo","runName":"%s/%s","runId":%q,
		"runStartTime":"2026-12-01T10:00:00Z","runEndTime":"2026-12-01T10:05:00Z",
		"servingModelArtifacts":[],"pipelineComponents":[],"provider":"%s/kfp"}`, status, ns, ns, run, id, ns)
}

func TestAProviderServiceCompletesARun(t *testing.T) {
	f, url := events(t)
	r := f.SyncedRun(t, "train", "backend-1")
	tok := token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp")

	code, msg := post(t, url, tok, runEvent(f.NS, "train", "backend-1", "failed"))
	require.Equal(t, http.StatusOK, code, msg)
	f.Eventually(t, r, func(c *assert.CollectT) {
		assert.Equal(c, pipelinesv1beta1.CompletionStateFailed, r.Status.CompletionState)
		assert.Contains(c, r.Status.CompletionMessage, "backend-1 failed")
		if assert.Len(c, r.Status.CompletionEvents.Pending, 1) {
			ev := r.Status.CompletionEvents.Pending[0]
			assert.Equal(c, "backend-1", ev.ID)
			assert.Equal(c, f.NS+"/kfp", ev.Source)
			assert.Equal(c, []string{"audit"}, ev.Sinks)
			var data map[string]any
			assert.NoError(c, json.Unmarshal([]byte(ev.Data), &data))
			assert.Equal(c, f.NS+"/train", data["runName"])
			assert.Equal(c, "failed", data["status"])
		}
	})

	// Posted again (a provider service retrying): applied once.
	code, msg = post(t, url, tok, runEvent(f.NS, "train", "backend-1", "failed"))
	require.Equal(t, http.StatusOK, code, msg)
	// Reported again as another state: refused, the first report stands.
	code, msg = post(t, url, tok, runEvent(f.NS, "train", "backend-1", "succeeded"))
	require.Equal(t, http.StatusConflict, code, msg)
	assert.Contains(t, msg, "already completed as Failed")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(r), r))
	assert.Equal(t, pipelinesv1beta1.CompletionStateFailed, r.Status.CompletionState, "the first report stands")
	assert.Len(t, r.Status.CompletionEvents.Pending, 1)
}

// kfp-operator's services complete a Run by its name: the stub's
// completion carries another id than its create answered
// (stub-run-<unix seconds>), Vertex AI's the pipeline job id.
func TestACompletionIsKeyedByTheRunNotItsBackendID(t *testing.T) {
	f, url := events(t)
	r := f.SyncedRun(t, "train", "team-train")
	tok := token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp")

	code, msg := post(t, url, tok, runEvent(f.NS, "train", "stub-run-1764583200", "succeeded"))
	require.Equal(t, http.StatusOK, code, msg)
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(r), r))
	assert.Equal(t, pipelinesv1beta1.CompletionStateSucceeded, r.Status.CompletionState)
	assert.Contains(t, r.Status.CompletionMessage, "backend run stub-run-1764583200 (created as team-train) succeeded")
	assert.Equal(t, "team-train", r.Status.Provider.ID, "the create's id, which deletes it, stays")
	require.Len(t, r.Status.CompletionEvents.Pending, 1)
	assert.Equal(t, "stub-run-1764583200", r.Status.CompletionEvents.Pending[0].ID, "the event carries the completion's backend run")
}

// A provider service may post before the operator has recorded its
// create's answer (kfp-operator's stub posts 5 s after the create, and
// never again): the completion is recorded at once, not lost.
func TestACompletionBeforeTheCreateIsRecordedIsKept(t *testing.T) {
	f, url := events(t)
	f.SyncedPipeline(t, "demo")
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "early"},
		Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo"}}
	require.NoError(t, cp.Client.Create(ctx, r))
	create := f.EventuallyRun(t, r, 1, contract.OperationCreate) // running: no id recorded
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(r), r))
	require.Empty(t, r.Status.Provider.ID)

	code, msg := post(t, url, token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), runEvent(f.NS, "early", "early-7", "succeeded"))
	require.Equal(t, http.StatusOK, code, msg)
	f.Finish(t, create, true, "early", "", "")
	f.Eventually(t, r, func(c *assert.CollectT) {
		assert.Equal(c, pipelinesv1beta1.CompletionStateSucceeded, r.Status.CompletionState)
		assert.Equal(c, "early", r.Status.Provider.ID, "the create's answer is recorded after")
		assert.Equal(c, metav1.ConditionTrue, fixture.Condition(r, pipelinesv1beta1.ConditionReady).Status)
	})
}

func TestEventsFromAnyoneButTheProviderAreRefused(t *testing.T) {
	f, url := events(t)
	r := f.SyncedRun(t, "train", "backend-1")
	require.NoError(t, cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "intruder"}}))
	// Another team's Provider, whose account is genuine but reports for its own runs only.
	other := f.NewNamespace(t)
	require.NoError(t, cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "kfp-provider"}}))
	otherProvider := f.Provider.DeepCopy()
	otherProvider.ObjectMeta = metav1.ObjectMeta{Namespace: other, Name: "kfp"}
	otherProvider.Spec.AllowedNamespaces = []string{"*"}
	require.NoError(t, cp.Client.Create(ctx, otherProvider))

	valid := runEvent(f.NS, "train", "backend-1", "succeeded")
	for _, tc := range []struct {
		name, bearer, body string
		code               int
		says               string
	}{
		{"no token", "", valid, http.StatusUnauthorized, "no bearer token"},
		{"not a token", "garbage", valid, http.StatusUnauthorized, "not valid"},
		{"another audience", token(t, f.NS, "kfp-provider", "https://kubernetes.default.svc"), valid, http.StatusUnauthorized, "not valid"},
		{"another account", token(t, f.NS, "intruder", audience+"/"+f.NS+"/kfp"), valid, http.StatusForbidden,
			"may not report for Provider " + f.NS + "/kfp: it does not exist, or reports as another account"},
		{"the operator's audience, not the Provider's", token(t, f.NS, "kfp-provider", audience), valid, http.StatusUnauthorized, "not valid for audience"},
		{"our account, another provider's audience", token(t, f.NS, "kfp-provider", audience+"/"+other+"/kfp"), valid, http.StatusUnauthorized, "not valid"},
		{"no such provider", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/absent"),
			strings.ReplaceAll(valid, `"provider":"`+f.NS+`/kfp"`, `"provider":"`+f.NS+`/absent"`), http.StatusForbidden,
			"may not report for Provider " + f.NS + "/absent: it does not exist, or reports as another account"},
		{"another team's provider for our run", token(t, other, "kfp-provider", audience+"/"+other+"/kfp"),
			strings.ReplaceAll(valid, `"provider":"`+f.NS+`/kfp"`, `"provider":"`+other+`/kfp"`), http.StatusForbidden, "runs on Provider " + f.NS + "/kfp, not " + other + "/kfp"},
		{"not JSON", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), "{", http.StatusBadRequest, "not JSON"},
		{"unknown status", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), strings.Replace(valid, `"succeeded"`, `"done"`, 1), http.StatusBadRequest, `status "done"`},
		{"no resource", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), `{"status":"succeeded","runId":"x","provider":"` + f.NS + `/kfp"}`, http.StatusBadRequest, "names no resource"},
		{"no such run", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), runEvent(f.NS, "absent", "backend-1", "succeeded"), http.StatusGone, "no Run " + f.NS + "/absent"},
		{"too large", token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), strings.Replace(valid, `"runId"`, `"pad":"`+strings.Repeat("<", 300<<10)+`","runId"`, 1), http.StatusRequestEntityTooLarge, "over 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := post(t, url, tc.bearer, tc.body)
			assert.Equal(t, tc.code, code, msg)
			assert.Contains(t, msg, tc.says)
		})
	}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(r), r))
	assert.Empty(t, r.Status.CompletionState, "no refused event completed the Run")
}

func TestAScheduledRunUpdatesItsRunConfiguration(t *testing.T) {
	f, url := events(t)
	f.SyncedPipeline(t, "demo")
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "examples"},
		Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "demo",
			Artifacts: []pipelinesv1beta1.OutputArtifact{{Name: "model", Path: "train:model:1[pushed == 1]"}}}}}
	require.NoError(t, cp.Client.Create(ctx, rc))
	body := fmt.Sprintf(`{"status":"succeeded","pipelineName":{"namespace":%q,"name":"demo"},
		"runConfigurationName":{"namespace":%q,"name":"examples"},"runId":"sched-7","runEndTime":"2026-12-01T10:05:00Z",
		"servingModelArtifacts":[],"pipelineComponents":[{"name":"train","componentArtifacts":[{"name":"model","artifacts":[
			{"uri":"gs://b/unpushed","metadata":{"pushed":0}},{"uri":"gs://b/pushed $$ ünï","metadata":{"pushed":1}}]}]}],
		"provider":{"namespace":%q,"name":"kfp"}}`, f.NS, f.NS, f.NS)
	code, msg := post(t, url, token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), body)
	require.Equal(t, http.StatusOK, code, msg)
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(rc), rc))
	require.NotNil(t, rc.Status.LatestRuns.Succeeded)
	assert.Equal(t, "sched-7", rc.Status.LatestRuns.Succeeded.ProviderID)
	assert.Equal(t, []pipelinesv1beta1.Artifact{{Name: "model", Location: "gs://b/pushed $$ ünï"}}, rc.Status.LatestRuns.Succeeded.Artifacts,
		"the filter picked the pushed model, its URI unchanged")
	assert.Equal(t, time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC), rc.Status.LatestRuns.Succeeded.CompletedAt.UTC())
	require.Len(t, rc.Status.CompletionEvents.Pending, 1, "a scheduled run's event waits in its RunConfiguration")
	assert.Contains(t, rc.Status.CompletionEvents.Pending[0].Data, `"uri":"gs://b/pushed $$ ünï"`)

	code, msg = post(t, url, token(t, f.NS, "kfp-provider", audience+"/"+f.NS+"/kfp"), strings.ReplaceAll(body, "examples", "absent"))
	assert.Equal(t, http.StatusGone, code, msg)
}
