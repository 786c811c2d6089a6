package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withIndicator adds a triggerIndicator to a body.
func withIndicator(t *testing.T, b, indicator string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(b), &m))
	m["triggerIndicator"] = json.RawMessage(indicator)
	data, err := json.Marshal(m)
	require.NoError(t, err)
	return string(data)
}

// doWith sends a request with headers and returns the status.
func (f *fixture) doWith(t *testing.T, method, path, body string, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Add(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// triggers are what GET /fixture/triggers lists, without the times.
func (f *fixture) triggers(t *testing.T) []map[string]any {
	t.Helper()
	code, answer := f.do(t, http.MethodGet, "/fixture/triggers", "")
	require.Equal(t, http.StatusOK, code)
	var out []map[string]any
	require.NoError(t, json.Unmarshal([]byte(answer), &out), answer)
	for _, e := range out {
		assert.NotEmpty(t, e["received"])
		delete(e, "received")
	}
	return out
}

func TestTriggerIndicatorsAreRecorded(t *testing.T) {
	for _, mode := range []string{modeDefault, modeKFPOperator} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, "")
			if mode == modeKFPOperator {
				f.s.useKFPOperatorBehaviour()
			}
			runID := map[string]string{modeDefault: "run-team-a-r-1", modeKFPOperator: "team-a-r"}[mode]

			// In the body, as kfp-operator sends it now.
			require.Equal(t, http.StatusCreated, f.doWith(t, http.MethodPost, "/resource/run", withIndicator(t, body(t, "run", "v1", ""),
				`{"type": "onChangeRunSpec", "source": "rc", "sourceNamespace": "team-a"}`), nil))
			// As headers, as earlier versions sent it (with their values as sent).
			require.Equal(t, http.StatusCreated, f.doWith(t, http.MethodPost, "/resource/runschedule", body(t, "runschedule", "v1", ""),
				map[string]string{"Trigger-Type": "trigger-type: schedule", "trigger-source": "rc-abc", "trigger-source-namespace": "team-a"}))
			// An update, in the body.
			require.Equal(t, http.StatusOK, f.doWith(t, http.MethodPut, "/resource/runschedule/"+url.PathEscape("schedule-team-a-rc"),
				withIndicator(t, body(t, "runschedule", "v2", ""), `{"type":"schedule","source":"rc-abc","sourceNamespace":"team-a"}`), nil))
			// Neither; a refused create; kinds that have none.
			require.Equal(t, http.StatusCreated, f.doWith(t, http.MethodPost, "/resource/run", body(t, "run", "v2", ""), nil))
			require.Equal(t, http.StatusInternalServerError, f.doWith(t, http.MethodPost, "/resource/run",
				withIndicator(t, body(t, "run", "v3", "500:backend down"), `{"type":"runConfiguration","source":"up","sourceNamespace":"team-b"}`), nil))
			f.doWith(t, http.MethodPost, "/resource/pipeline", body(t, "pipeline", "v1", ""), map[string]string{"trigger-type": "x"})
			f.doWith(t, http.MethodPost, "/resource/experiment", body(t, "experiment", "v1", ""), nil)

			want := []map[string]any{
				{"seq": 1.0, "method": "POST", "kind": "run", "id": runID, "name": "team-a/r", "version": "v1", "status": 201.0,
					"triggerIndicator": map[string]any{"type": "onChangeRunSpec", "source": "rc", "sourceNamespace": "team-a"}},
				{"seq": 2.0, "method": "POST", "kind": "runschedule", "id": "schedule-team-a-rc", "name": "team-a/rc", "version": "v1", "status": 201.0,
					"headers": map[string]any{"trigger-type": "trigger-type: schedule", "trigger-source": "rc-abc", "trigger-source-namespace": "team-a"}},
				{"seq": 3.0, "method": "PUT", "kind": "runschedule", "id": "schedule-team-a-rc", "name": "team-a/rc", "version": "v2", "status": 200.0,
					"triggerIndicator": map[string]any{"type": "schedule", "source": "rc-abc", "sourceNamespace": "team-a"}},
				{"seq": 4.0, "method": "POST", "kind": "run", "id": map[string]string{modeDefault: "run-team-a-r-2", modeKFPOperator: "team-a-r"}[mode],
					"name": "team-a/r", "version": "v2", "status": 201.0},
				{"seq": 5.0, "method": "POST", "kind": "run", "id": "", "name": "team-a/r", "version": "v3", "status": 500.0,
					"triggerIndicator": map[string]any{"type": "runConfiguration", "source": "up", "sourceNamespace": "team-b"}},
			}
			assert.Equal(t, want, f.triggers(t))

			lines := f.log.lines("trigger")
			require.Len(t, lines, 5, "each is logged too")
			assert.Contains(t, lines[0], `"triggerIndicator":{"type":"onChangeRunSpec","source":"rc","sourceNamespace":"team-a"}`)
			assert.Contains(t, lines[1], `"trigger-source":"rc-abc"`)
		})
	}
}

func TestAnIndicatorIsKeptVerbatim(t *testing.T) {
	f := newFixture(t, "")
	indicator := `{"type":"onChangePipeline","source":"penguin","sourceNamespace":"team-a","extra":[1,2]}`
	f.doWith(t, http.MethodPost, "/resource/run", withIndicator(t, body(t, "run", "v1", ""), indicator), nil)
	f.doWith(t, http.MethodPost, "/resource/run", withIndicator(t, body(t, "run", "v1", ""), `{"type":"","source":"","sourceNamespace":""}`), nil)
	f.doWith(t, http.MethodPost, "/resource/run", withIndicator(t, body(t, "run", "v1", ""), `null`), nil)
	got := f.s.triggers.all()
	require.Len(t, got, 3)
	assert.JSONEq(t, indicator, string(got[0].Indicator))
	assert.JSONEq(t, `{"type":"","source":"","sourceNamespace":""}`, string(got[1].Indicator), "a Run not made by a RunConfiguration")
	assert.Nil(t, got[2].Indicator, "null is none")
}

func TestTheTriggerLogIsBounded(t *testing.T) {
	f := newFixture(t, "")
	for i := 0; i < maxTriggers+2; i++ {
		f.s.triggers.note(httpRequest(t), "run", "id", "team-a/r", "v1", nil, 201)
	}
	got := f.s.triggers.all()
	require.Len(t, got, maxTriggers)
	assert.Equal(t, 3, got[0].Seq, "the oldest went first")
	assert.Equal(t, maxTriggers+2, got[len(got)-1].Seq)
}

func httpRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, "http://fixture/resource/run", nil)
	require.NoError(t, err)
	return r
}
