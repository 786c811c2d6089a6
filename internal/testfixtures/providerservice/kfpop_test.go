package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
)

// newKFPOperatorFixture serves the fixture in mode kfp-operator, set up as
// run() sets it up, posting to webhook after delay.
func newKFPOperatorFixture(t *testing.T, webhook string, delay time.Duration) *fixture {
	t.Helper()
	f := newFixture(t, webhook)
	f.s.useKFPOperatorBehaviour()
	f.s.poster.delay = delay
	return f
}

func TestModeFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		env   []string
		mode  string
		delay time.Duration
	}{
		{nil, "default", 2 * time.Second},
		{[]string{"FIXTURE_MODE=default"}, "default", 2 * time.Second},
		{[]string{"FIXTURE_MODE=kfp-operator"}, "kfp-operator", 0},
		{[]string{"PARAMETERS_FIXTUREMODE=kfp-operator"}, "kfp-operator", 0},
		{[]string{"PARAMETERS_FIXTUREMODE=kfp-operator", "PARAMETERS_FIXTURECOMPLETIONDELAY=250ms"}, "kfp-operator", 250 * time.Millisecond},
		{[]string{"FIXTURE_MODE=kfp-operator", "FIXTURE_COMPLETION_DELAY=1s", "PARAMETERS_FIXTURECOMPLETIONDELAY=5s"}, "kfp-operator", time.Second},
		{[]string{"FIXTURE_COMPLETION_DELAY=0s"}, "default", 0},
	} {
		cfg, err := configFromEnv(append([]string{"PROVIDERNAME=a/b"}, c.env...))
		require.NoError(t, err, c.env)
		assert.Equal(t, c.mode, cfg.Mode, c.env)
		assert.Equal(t, c.delay, cfg.CompletionDelay, c.env)
	}
	_, err := configFromEnv([]string{"PROVIDERNAME=a/b", "FIXTURE_MODE=vertex"})
	assert.EqualError(t, err, `fixture mode "vertex": want "default" or "kfp-operator"`)
	_, err = configFromEnv([]string{"PROVIDERNAME=a/b", "FIXTURE_COMPLETION_DELAY=5"})
	assert.ErrorContains(t, err, `completion delay "5"`)
	_, err = configFromEnv([]string{"PROVIDERNAME=a/b", "FIXTURE_COMPLETION_DELAY=-1s"})
	assert.ErrorContains(t, err, `completion delay "-1s"`)
}

func TestTheConfiguredServiceTakesTheMode(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(&logBuffer{}, nil))
	s := newConfiguredService(context.Background(), config{Provider: "a/b", Mode: modeKFPOperator, CompletionDelay: 0}, log)
	assert.Equal(t, modeKFPOperator, s.mode)
	assert.True(t, s.poster.once)
	assert.True(t, s.store.runIDIsName)
	assert.Zero(t, s.poster.delay)

	s = newConfiguredService(context.Background(), config{Provider: "a/b", Mode: modeDefault, CompletionDelay: 2 * time.Second}, log)
	assert.Equal(t, modeDefault, s.mode)
	assert.False(t, s.poster.once)
	assert.False(t, s.store.runIDIsName)
	assert.Equal(t, 2*time.Second, s.poster.delay)
}

func TestACompletionCarriesAnotherIDThanTheCreateAnswered(t *testing.T) {
	hook := newWebhook(t, 200)
	f := newKFPOperatorFixture(t, hook.URL, 0)
	code, answer := f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	require.Equal(t, http.StatusCreated, code)
	assert.Equal(t, "team-a-r", idOf(t, answer), "Vertex AI's service answers <ns>-<name>")
	f.s.poster.wg.Wait()

	_, bodies := hook.got()
	require.Len(t, bodies, 1)
	assert.Equal(t, expected(t, `{
		"status": "succeeded",
		"pipelineName": "team-a/p",
		"runName": "team-a/r",
		"runId": "team-a-r-v1",
		"servingModelArtifacts": [],
		"pipelineComponents": [{"name": "train", "componentArtifacts": [{"name": "model",
			"artifacts": [{"uri": "mem://team-a-r-v1/train/model", "metadata": {"pushed": 1}}]}]}],
		"provider": "team-a/fixture"}`), event(t, bodies[0]), "the pipeline job's id, <ns>-<name>-<version>")
	ev, err := runcompletion.Decode([]byte(bodies[0]))
	require.NoError(t, err, "the operator reads it")
	assert.NotEqual(t, idOf(t, answer), ev.RunID)

	// A new version of the same Run: the same answer, another completion id.
	_, answer = f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v2", ""))
	assert.Equal(t, "team-a-r", idOf(t, answer))
	f.s.poster.wg.Wait()
	_, bodies = hook.got()
	require.Len(t, bodies, 2)
	assert.Equal(t, "team-a-r-v2", event(t, bodies[1])["runId"])
}

func TestTheDefaultModeKeepsItsIDs(t *testing.T) {
	hook := newWebhook(t, 200)
	f := newFixture(t, hook.URL)
	_, answer := f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	assert.Equal(t, "run-team-a-r-1", idOf(t, answer))
	f.s.poster.wg.Wait()
	_, bodies := hook.got()
	require.Len(t, bodies, 1)
	assert.Equal(t, "run-team-a-r-1", event(t, bodies[0])["runId"], "the same id both ways")
}

func TestACompletionIsPostedOnceWhateverTheAnswer(t *testing.T) {
	for _, code := range []int{200, 400, 409, 410, 500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			hook := newWebhook(t, code, 200)
			f := newKFPOperatorFixture(t, hook.URL, 0)
			f.s.poster.first, f.s.poster.max = time.Microsecond, time.Microsecond
			f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
			f.s.poster.wg.Wait()

			posts, _ := hook.got()
			assert.Len(t, posts, 1, "never retried")
			lines := f.log.lines("webhook")
			require.Len(t, lines, 1, "the one post is logged")
			assert.Contains(t, lines[0], fmt.Sprintf(`"status":%d`, code), "with the answer")
			assert.Contains(t, lines[0], `"runId":"team-a-r-v1"`)
			if code == 200 {
				assert.Contains(t, lines[0], `"outcome":"delivered"`)
			} else {
				assert.Contains(t, lines[0], `"outcome":"posted once: not retried"`)
			}
		})
	}
}

func TestAnUnreachableWebhookIsNotRetried(t *testing.T) {
	hook := newWebhook(t, 200)
	hook.Close()
	f := newKFPOperatorFixture(t, hook.URL, 0)
	f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	f.s.poster.wg.Wait()
	lines := f.log.lines("webhook")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"error":`)
	assert.Contains(t, lines[0], `"outcome":"posted once: not retried"`)
}

// The completion comes before the caller has even read the create's
// answer, so before it can have recorded the answered id: the create is
// sent on a bare connection whose answer is read only after the webhook
// has the post.
func TestTheCompletionIsPostedRightAfterTheAnswer(t *testing.T) {
	got := make(chan string, 1)
	hook := newWebhook(t, 200)
	hook.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := make([]byte, 4096)
		n, _ := r.Body.Read(data)
		got <- string(data[:n])
	})
	f := newKFPOperatorFixture(t, hook.URL, 0)

	addr := strings.TrimPrefix(f.url, "http://")
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	b := body(t, "run", "v1", "")
	sent := time.Now()
	_, err = fmt.Fprintf(conn, "POST /resource/run HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(b), b)
	require.NoError(t, err)

	var posted string
	select {
	case posted = <-got:
	case <-time.After(defaultCompletionDelay):
		t.Fatal("no completion before the default mode's delay: not early")
	}
	t.Logf("posted %v after the create was sent", time.Since(sent))

	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the answer was sent before the post")
	defer func() { _ = resp.Body.Close() }()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	ev, err := runcompletion.Decode([]byte(posted))
	require.NoError(t, err)
	assert.Equal(t, "team-a-r-v1", ev.RunID)
}

func TestTheDelayIsKept(t *testing.T) {
	got := make(chan time.Time, 1)
	hook := newWebhook(t, 200)
	hook.Config.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got <- time.Now() })
	f := newKFPOperatorFixture(t, hook.URL, 150*time.Millisecond)
	f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	answered := time.Now()
	select {
	case at := <-got:
		assert.GreaterOrEqual(t, at.Sub(answered), 100*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("never posted")
	}
}

func TestAScheduledRunIsReportedOnceForItsRunConfiguration(t *testing.T) {
	hook := newWebhook(t, 503, 200)
	f := newKFPOperatorFixture(t, hook.URL, 0)
	_, answer := f.do(t, http.MethodPost, "/resource/runschedule", body(t, "runschedule", "v1", ""))
	id := idOf(t, answer)
	assert.Equal(t, "schedule-team-a-rc", id)
	f.s.poster.wg.Wait()

	_, bodies := hook.got()
	require.Len(t, bodies, 1, "once, though refused")
	assert.Equal(t, expected(t, `{
		"status": "succeeded",
		"pipelineName": "team-a/p",
		"runConfigurationName": "team-a/rc",
		"runId": "schedule-team-a-rc-1",
		"servingModelArtifacts": [],
		"pipelineComponents": [{"name": "train", "componentArtifacts": [{"name": "model",
			"artifacts": [{"uri": "mem://schedule-team-a-rc-1/train/model", "metadata": {"pushed": 1}}]}]}],
		"provider": "team-a/fixture"}`), event(t, bodies[0]), "no runName; not the schedule's id")
}
