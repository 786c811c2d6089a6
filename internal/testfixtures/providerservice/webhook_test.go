package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
)

// webhook is a test operator webhook answering codes in turn (the last
// one from then on) and recording what it got.
type webhook struct {
	*httptest.Server
	mu      sync.Mutex
	codes   []int
	posts   []*http.Request
	bodies  []string
	answers int
}

func newWebhook(t *testing.T, codes ...int) *webhook {
	w := &webhook{codes: codes}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.posts = append(w.posts, r)
		w.bodies = append(w.bodies, string(data))
		rw.WriteHeader(w.codes[min(w.answers, len(w.codes)-1)])
		w.answers++
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) got() ([]*http.Request, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*http.Request(nil), w.posts...), append([]string(nil), w.bodies...)
}

// event decodes a posted completion, checks its times and drops them.
func event(t *testing.T, body string) map[string]any {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &ev))
	for _, field := range []string{"runStartTime", "runEndTime"} {
		s, _ := ev[field].(string)
		_, err := time.Parse(time.RFC3339, s)
		assert.NoError(t, err, "%s %q", field, s)
		delete(ev, field)
	}
	return ev
}

func expected(t *testing.T, s string) map[string]any {
	t.Helper()
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &ev))
	return ev
}

func TestARunCompletionIsPostedUntilTaken(t *testing.T) {
	hook := newWebhook(t, 503, 503, 200)
	f := newFixture(t, hook.URL)
	code, _ := f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	require.Equal(t, http.StatusCreated, code)
	f.s.poster.wg.Wait()

	posts, bodies := hook.got()
	require.Len(t, posts, 3, "twice refused, then taken, then no more")
	for i, r := range posts {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		assert.Empty(t, r.Header.Get("Authorization"), "the relay adds the token")
		assert.Equal(t, bodies[0], bodies[i], "the same event each time")
	}
	assert.Equal(t, expected(t, `{
		"status": "succeeded",
		"pipelineName": "team-a/p",
		"runName": "team-a/r",
		"runId": "run-team-a-r-1",
		"servingModelArtifacts": [],
		"pipelineComponents": [{"name": "train", "componentArtifacts": [{"name": "model",
			"artifacts": [{"uri": "mem://run-team-a-r-1/train/model", "metadata": {"pushed": 1}}]}]}],
		"provider": "team-a/fixture"}`), event(t, bodies[0]), "no runConfigurationName for a run without one")

	ev, err := runcompletion.Decode([]byte(bodies[0]))
	require.NoError(t, err, "the operator reads it")
	assert.Equal(t, "team-a/r", ev.RunName.String())
	assert.Equal(t, "team-a/fixture", ev.Provider.String())

	lines := f.log.lines("webhook")
	require.Len(t, lines, 3, "every attempt is logged")
	assert.Contains(t, lines[0], `"status":503`)
	assert.Contains(t, lines[0], `"outcome":"retrying in 1ms"`)
	assert.Contains(t, lines[1], `"outcome":"retrying in 2ms"`)
	assert.Contains(t, lines[2], `"status":200`)
	assert.Contains(t, lines[2], `"outcome":"delivered"`)
}

func TestWhichAnswersAreRetried(t *testing.T) {
	for _, c := range []struct {
		codes []int
		posts int
	}{
		{[]int{410}, 1},
		{[]int{400}, 1},
		{[]int{403}, 1},
		{[]int{404}, 1},
		{[]int{202}, 1},
		{[]int{408, 200}, 2},
		{[]int{409, 200}, 2},
		{[]int{429, 200}, 2},
		{[]int{500, 502, 504, 200}, 4},
	} {
		hook := newWebhook(t, c.codes...)
		f := newFixture(t, hook.URL)
		f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
		f.s.poster.wg.Wait()
		posts, _ := hook.got()
		assert.Len(t, posts, c.posts, "answers %v", c.codes)
	}
}

func TestAGoneRunIsNotRetried(t *testing.T) {
	hook := newWebhook(t, 410)
	f := newFixture(t, hook.URL)
	f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	f.s.poster.wg.Wait()
	posts, _ := hook.got()
	assert.Len(t, posts, 1)
	lines := f.log.lines("webhook")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"status":410`)
	assert.Contains(t, lines[0], `"outcome":"refused: not retrying"`)
}

func TestPostingGivesUp(t *testing.T) {
	hook := newWebhook(t, 503)
	f := newFixture(t, hook.URL)
	f.s.poster.giveUp = 30 * time.Millisecond
	f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	f.s.poster.wg.Wait()
	posts, _ := hook.got()
	assert.GreaterOrEqual(t, len(posts), 3)
	lines := f.log.lines("webhook")
	assert.Contains(t, lines[len(lines)-1], `"outcome":"giving up"`)
}

func TestAFailedRun(t *testing.T) {
	hook := newWebhook(t, 200)
	f := newFixture(t, hook.URL)
	f.do(t, http.MethodPost, "/resource/run",
		`{"name": "team-a/r", "pipelineName": "team-a/p", "runConfigurationName": "team-a/rc", "parameters": {"FIXTURE_RUN_STATUS": "failed"}}`)
	f.s.poster.wg.Wait()
	_, bodies := hook.got()
	require.Len(t, bodies, 1)
	ev := event(t, bodies[0])
	assert.Equal(t, "failed", ev["status"])
	assert.Equal(t, "team-a/rc", ev["runConfigurationName"])
	assert.Equal(t, "team-a/r", ev["runName"])
}

func TestARunScheduleReportsItsScheduledRuns(t *testing.T) {
	hook := newWebhook(t, 200)
	f := newFixture(t, hook.URL)
	_, answer := f.do(t, http.MethodPost, "/resource/runschedule", body(t, "runschedule", "v1", ""))
	id := idOf(t, answer)
	require.Equal(t, "schedule-team-a-rc", id)
	f.s.poster.wg.Wait()
	for _, version := range []string{"v1", "v2", "v2", "v3"} {
		code, _ := f.do(t, http.MethodPut, "/resource/runschedule/"+url.PathEscape(id), body(t, "runschedule", version, ""))
		require.Equal(t, http.StatusOK, code)
		f.s.poster.wg.Wait()
	}

	_, bodies := hook.got()
	require.Len(t, bodies, 5)
	var runIDs []string
	for _, b := range bodies {
		runIDs = append(runIDs, event(t, b)["runId"].(string))
	}
	assert.Equal(t, []string{"schedule-team-a-rc-1", "schedule-team-a-rc-1", "schedule-team-a-rc-2",
		"schedule-team-a-rc-2", "schedule-team-a-rc-3"}, runIDs, "a new version is a new scheduled run")
	assert.Equal(t, expected(t, `{
		"status": "succeeded",
		"pipelineName": "team-a/p",
		"runConfigurationName": "team-a/rc",
		"runId": "schedule-team-a-rc-1",
		"servingModelArtifacts": [],
		"pipelineComponents": [{"name": "train", "componentArtifacts": [{"name": "model",
			"artifacts": [{"uri": "mem://schedule-team-a-rc-1/train/model", "metadata": {"pushed": 1}}]}]}],
		"provider": "team-a/fixture"}`), event(t, bodies[0]), "no runName")
	_, err := runcompletion.Decode([]byte(bodies[0]))
	assert.NoError(t, err, "the operator reads it")
}

func TestNothingIsPostedForOtherKinds(t *testing.T) {
	hook := newWebhook(t, 200)
	f := newFixture(t, hook.URL)
	for _, kind := range []string{"pipeline", "experiment"} {
		_, answer := f.do(t, http.MethodPost, "/resource/"+kind, body(t, kind, "v1", ""))
		f.do(t, http.MethodPut, "/resource/"+kind+"/"+url.PathEscape(idOf(t, answer)), body(t, kind, "v2", ""))
	}
	f.do(t, http.MethodDelete, "/resource/run/run-team-a-r-1", "")
	f.s.poster.wg.Wait()
	posts, _ := hook.got()
	assert.Empty(t, posts)
}
