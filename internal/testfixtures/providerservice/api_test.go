package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer collects the fixture's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the raw log lines whose msg is msg.
func (l *logBuffer) lines(msg string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var line struct{ Msg string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			out = append(out, sc.Text())
		}
	}
	return out
}

type fixture struct {
	s   *service
	url string
	log *logBuffer
}

// newFixture serves the fixture, posting completions to webhook quickly.
func newFixture(t *testing.T, webhook string) *fixture {
	t.Helper()
	log := &logBuffer{}
	logger := slog.New(slog.NewJSONHandler(log, nil))
	ctx, cancel := context.WithCancel(context.Background())
	p := newPoster(ctx, webhook, logger)
	p.delay, p.first, p.max, p.giveUp = time.Millisecond, time.Millisecond, 4*time.Millisecond, 10*time.Second
	s := newService("team-a/fixture", p, logger)
	srv := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		srv.Close()
		cancel()
		p.wg.Wait()
	})
	return &fixture{s: s, url: srv.URL, log: log}
}

// do sends a request and returns the status and body.
func (f *fixture) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK || strings.HasPrefix(path, "/resource") {
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, string(data)
}

func idOf(t *testing.T, body string) string {
	t.Helper()
	var answer map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &answer), body)
	return answer["id"]
}

// body is a kind's request body; a non-empty answer is its FIXTURE_ANSWER.
func body(t *testing.T, kind, version, answer string) string {
	t.Helper()
	params := map[string]string{"learning-rate": "0.1"}
	if answer != "" {
		params[directiveName] = answer
	}
	var b map[string]any
	switch kind {
	case "pipeline":
		env := []map[string]string{{"name": "STAGE", "value": "test"}}
		if answer != "" {
			env = append(env, map[string]string{"name": directiveName, "value": answer})
		}
		b = map[string]any{"pipelineDefinition": map[string]any{"name": "team-a/p", "version": version, "image": "registry/p:1",
			"env": env, "framework": map[string]any{"name": "tfx", "parameters": map[string]any{"beamArgs": []string{"--x"}}}},
			"compiledPipeline": map[string]any{"pipelineSpec": map[string]any{}}}
	case "experiment":
		description := "an experiment"
		if answer != "" {
			description = directivePrefix + answer
		}
		b = map[string]any{"name": "team-a/exp", "version": version, "description": description}
	case "run":
		b = map[string]any{"name": "team-a/r", "version": version, "pipelineName": "team-a/p", "pipelineVersion": "v1",
			"experimentName": "team-a/exp", "parameters": params, "artifacts": []map[string]string{{"name": "m", "path": "train:model"}}}
	case "runschedule":
		b = map[string]any{"name": "team-a/rc", "version": version, "pipelineName": "team-a/p", "pipelineVersion": "v1",
			"runConfigurationName": "team-a/rc", "experimentName": "team-a/exp", "parameters": params,
			"schedule": map[string]string{"cronExpression": "0 * * * *", "startTime": "2024-01-01T00:00:00Z", "endTime": ""}}
	}
	data, err := json.Marshal(b)
	require.NoError(t, err)
	return string(data)
}

func TestProbes(t *testing.T) {
	f := newFixture(t, "")
	for _, path := range []string{"/readyz", "/livez"} {
		code, _ := f.do(t, http.MethodGet, path, "")
		assert.Equal(t, http.StatusOK, code, path)
	}
}

func TestLifecycleOfEachKind(t *testing.T) {
	for kind, id := range map[string]string{
		"pipeline":    "team-a-p",
		"experiment":  "experiments/team-a-exp",
		"run":         "run-team-a-r-1",
		"runschedule": "schedule-team-a-rc",
	} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, "")
			code, answer := f.do(t, http.MethodPost, "/resource/"+kind, body(t, kind, "v1", ""))
			assert.Equal(t, http.StatusCreated, code)
			assert.JSONEq(t, `{"id": "`+id+`"}`, answer)
			rec, ok := f.s.store.get(kind, id)
			require.True(t, ok, "stored")
			assert.Equal(t, "v1", rec.Version)
			assert.JSONEq(t, body(t, kind, "v1", ""), string(rec.Body))

			code, answer = f.do(t, http.MethodPut, "/resource/"+kind+"/"+url.PathEscape(id), body(t, kind, "v2", ""))
			if kind == "run" {
				assert.Equal(t, http.StatusNotImplemented, code)
				assert.JSONEq(t, `{"providerError": "run update is not implemented"}`, answer)
			} else {
				assert.Equal(t, http.StatusOK, code)
				assert.JSONEq(t, `{"id": "`+id+`"}`, answer)
				rec, _ = f.s.store.get(kind, id)
				assert.Equal(t, "v2", rec.Version)
			}

			code, answer = f.do(t, http.MethodDelete, "/resource/"+kind+"/"+url.PathEscape(id), "")
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, "{}\n", answer, "no id")
			_, ok = f.s.store.get(kind, id)
			assert.False(t, ok, "deleted")

			code, answer = f.do(t, http.MethodDelete, "/resource/"+kind+"/"+url.PathEscape(id), "")
			assert.Equal(t, http.StatusOK, code, "deleting what is gone succeeds")
			assert.Equal(t, "{}\n", answer)
		})
	}
}

func TestIDs(t *testing.T) {
	f := newFixture(t, "")
	_, answer := f.do(t, http.MethodPost, "/resource/run/", body(t, "run", "v1", ""))
	assert.Equal(t, "run-team-a-r-1", idOf(t, answer), "a trailing slash creates too")
	_, answer = f.do(t, http.MethodPost, "/resource/run", body(t, "run", "v1", ""))
	assert.Equal(t, "run-team-a-r-2", idOf(t, answer), "each run is a new one")

	_, answer = f.do(t, http.MethodPost, "/resource/pipeline", body(t, "pipeline", "v1", ""))
	assert.Equal(t, "team-a-p", idOf(t, answer))
	_, answer = f.do(t, http.MethodPost, "/resource/pipeline", body(t, "pipeline", "v2", ""))
	assert.Equal(t, "team-a-p", idOf(t, answer), "stable across versions")
}

func TestAnEscapedIDRoundTrips(t *testing.T) {
	f := newFixture(t, "")
	_, answer := f.do(t, http.MethodPost, "/resource/experiment", body(t, "experiment", "v1", ""))
	id := idOf(t, answer)
	require.Equal(t, "experiments/team-a-exp", id)

	path := "/resource/experiment/" + url.PathEscape(id)
	require.Equal(t, "/resource/experiment/experiments%2Fteam-a-exp", path)
	code, answer := f.do(t, http.MethodPut, path, body(t, "experiment", "v2", ""))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, id, idOf(t, answer))
	rec, ok := f.s.store.get("experiment", id)
	require.True(t, ok, "the update found the id unescaped")
	assert.Equal(t, "v2", rec.Version)

	code, _ = f.do(t, http.MethodDelete, path, "")
	assert.Equal(t, http.StatusOK, code)
	_, ok = f.s.store.get("experiment", id)
	assert.False(t, ok)

	lines := f.log.lines("request")
	require.Len(t, lines, 3)
	var logged struct{ Path, ID string }
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &logged))
	assert.Equal(t, path, logged.Path, "the path as it arrived")
	assert.Equal(t, id, logged.ID, "the decoded id")
}

func TestFixtureAnswers(t *testing.T) {
	var posts int
	var mu sync.Mutex
	webhook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
	}))
	defer webhook.Close()
	for _, kind := range []string{"pipeline", "experiment", "run", "runschedule"} {
		for _, directive := range []struct {
			value string
			code  int
			msg   string
		}{
			{"400:bad pipeline image", 400, "bad pipeline image"},
			{"500:backend down", 500, "backend down"},
			{"501:not here", 501, "not here"},
			{" 503 : quota: exceeded ", 503, "quota: exceeded"},
		} {
			t.Run(kind+" "+directive.value, func(t *testing.T) {
				f := newFixture(t, webhook.URL)
				code, answer := f.do(t, http.MethodPost, "/resource/"+kind, body(t, kind, "v1", directive.value))
				assert.Equal(t, directive.code, code)
				assert.JSONEq(t, `{"providerError": "`+directive.msg+`"}`, answer)

				_, answer = f.do(t, http.MethodPost, "/resource/"+kind, body(t, kind, "v1", ""))
				id := idOf(t, answer)
				code, answer = f.do(t, http.MethodPut, "/resource/"+kind+"/"+url.PathEscape(id), body(t, kind, "v2", directive.value))
				assert.Equal(t, directive.code, code, "an update answers it too")
				assert.JSONEq(t, `{"providerError": "`+directive.msg+`"}`, answer)
				rec, _ := f.s.store.get(kind, id)
				assert.Equal(t, "v1", rec.Version, "a failed update changes nothing")

				code, _ = f.do(t, http.MethodDelete, "/resource/"+kind+"/"+url.PathEscape(id), "")
				assert.Equal(t, http.StatusOK, code, "not a delete directive")
				f.s.poster.wg.Wait()
			})
		}
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2*4, posts, "one completion for each run and runschedule that was created, none for a failed create")
}

func TestADeleteDirectiveAnswersTheDelete(t *testing.T) {
	for kind, directive := range map[string]string{
		"experiment":  "500:delete refused",
		"run":         "409:cannot Delete while running",
		"pipeline":    "503:the delete backend is down",
		"runschedule": "400:delete: bad schedule",
	} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, "")
			code, answer := f.do(t, http.MethodPost, "/resource/"+kind, body(t, kind, "v1", directive))
			require.Equal(t, http.StatusCreated, code, "the create succeeds")
			id := idOf(t, answer)
			path := "/resource/" + kind + "/" + url.PathEscape(id)

			code, answer = f.do(t, http.MethodDelete, path, "")
			c, msg, _ := strings.Cut(directive, ":")
			assert.Equal(t, c, strconv.Itoa(code))
			assert.JSONEq(t, `{"providerError": "`+msg+`"}`, answer)
			_, ok := f.s.store.get(kind, id)
			assert.True(t, ok, "still there")

			if kind == "run" {
				return // runs cannot be updated
			}
			code, _ = f.do(t, http.MethodPut, path, body(t, kind, "v2", ""))
			require.Equal(t, http.StatusOK, code)
			code, answer = f.do(t, http.MethodDelete, path, "")
			assert.Equal(t, http.StatusOK, code, "the update took the directive away")
			assert.Equal(t, "{}\n", answer)
		})
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t, "")
	for _, c := range []struct {
		method, path, body string
		code               int
		providerError      string
	}{
		{"POST", "/resource/pipeline", `{"pipelineDefinition": `, 400, "malformed pipeline: "},
		{"POST", "/resource/pipeline", `{}`, 400, "malformed pipeline: pipelineDefinition.name is required"},
		{"POST", "/resource/experiment", ``, 400, "malformed experiment: empty body"},
		{"POST", "/resource/experiment", `- a list`, 400, "malformed experiment: "},
		{"POST", "/resource/run", `{"version": "v1"}`, 400, "malformed run: name is required"},
		{"POST", "/resource/run", `{"name": "team-a/r", "parameters": {"n": 1}}`, 400, "malformed run: "},
		{"PUT", "/resource/runschedule/s", `{"name": "team-a/rc", "schedule": "daily"}`, 400, "malformed runschedule: "},
		{"POST", "/resource/run", `{"name": "team-a/r", "parameters": {"FIXTURE_ANSWER": "oops"}}`, 400,
			`FIXTURE_ANSWER "oops": want <code>:<message> with a code from 400 to 599`},
		{"POST", "/resource/run", `{"name": "team-a/r", "parameters": {"FIXTURE_ANSWER": "200:fine"}}`, 400, `FIXTURE_ANSWER "200:fine"`},
		{"POST", "/resource/widget", `{}`, 404, `unknown resource type "widget"`},
		{"DELETE", "/resource/Pipeline/x", ``, 404, `unknown resource type "Pipeline"`},
		{"GET", "/resource", ``, 404, "no route GET /resource"},
		{"GET", "/other", ``, 404, "no route GET /other"},
		{"PUT", "/resource/run/a/b", `{}`, 404, "no route PUT /resource/run/a/b"},
		{"GET", "/resource/run", ``, 405, "GET /resource/run: only POST creates"},
		{"PUT", "/resource/run/", `{}`, 405, "PUT /resource/run: only POST creates"},
		{"PATCH", "/resource/run/x", `{}`, 405, "PATCH /resource/run/{id}: only PUT and DELETE"},
	} {
		code, answer := f.do(t, c.method, c.path, c.body)
		assert.Equal(t, c.code, code, "%s %s %s", c.method, c.path, c.body)
		var got map[string]string
		require.NoError(t, json.Unmarshal([]byte(answer), &got), answer)
		assert.Len(t, got, 1, answer)
		assert.Contains(t, got["providerError"], c.providerError, "%s %s %s", c.method, c.path, c.body)
	}
}

func TestABadEscapeIsRefused(t *testing.T) {
	f := newFixture(t, "")
	req := httptest.NewRequest(http.MethodDelete, "/resource/experiment/x", nil)
	req.RequestURI = "/resource/experiment/experiments%2team-a-exp"
	rec := httptest.NewRecorder()
	f.s.routes().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.JSONEq(t, `{"providerError": "bad request path: parse \"/resource/experiment/experiments%2team-a-exp\": invalid URL escape \"%2t\""}`,
		rec.Body.String())
}

func TestAcceptsYAML(t *testing.T) {
	f := newFixture(t, "")
	code, answer := f.do(t, http.MethodPost, "/resource/experiment", "name: team-a/exp\nversion: v1\ndescription: 'yaml: yes'\n")
	assert.Equal(t, http.StatusCreated, code, answer)
	rec, ok := f.s.store.get("experiment", idOf(t, answer))
	require.True(t, ok)
	assert.JSONEq(t, `{"name": "team-a/exp", "version": "v1", "description": "yaml: yes"}`, string(rec.Body))
}

func TestLogsWhatArrivedVerbatim(t *testing.T) {
	f := newFixture(t, "")
	sent := `{"name":"team-a/r","pipelineName":"team-a/p","parameters":{"dollars":"$$(inputs.params.x) $HOME","quotes":"say \"hi\" 'there'",` +
		`"unicode":"héllo ✓ 日本","html":"<a&b>","escaped":"\u00e9"}}`
	code, _ := f.do(t, http.MethodPost, "/resource/run", sent)
	require.Equal(t, http.StatusCreated, code)
	lines := f.log.lines("request")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"body":`+sent, "the body as it arrived, byte for byte")

	var logged struct {
		Method, Path, Type, ID string
		Status                 int
		Answer                 map[string]string
		Body                   struct{ Parameters map[string]string }
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &logged))
	assert.Equal(t, "POST", logged.Method)
	assert.Equal(t, "/resource/run", logged.Path)
	assert.Equal(t, "run", logged.Type)
	assert.Equal(t, "run-team-a-r-1", logged.ID)
	assert.Equal(t, 201, logged.Status)
	assert.Equal(t, map[string]string{"id": "run-team-a-r-1"}, logged.Answer)
	assert.Equal(t, map[string]string{"dollars": "$$(inputs.params.x) $HOME", "quotes": `say "hi" 'there'`,
		"unicode": "héllo ✓ 日本", "html": "<a&b>", "escaped": "é"}, logged.Body.Parameters)
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, "")
	f.do(t, http.MethodPost, "/resource/experiment", body(t, "experiment", "v1", ""))
	rec := httptest.NewRecorder()
	f.s.metrics().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "fixture_requests_total 1\n")
}
