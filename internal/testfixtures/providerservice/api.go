package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	directiveName   = "FIXTURE_ANSWER"
	directivePrefix = directiveName + "="
	runStatusName   = "FIXTURE_RUN_STATUS"
	maxBody         = 8 << 20
)

var kinds = map[string]bool{"pipeline": true, "run": true, "runschedule": true, "experiment": true}

// resource is any kind's request body, as kfp-operator's provider service
// API has it; each kind uses its own fields.
type resource struct {
	PipelineDefinition *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Image   string `json:"image"`
		Env     []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
		Framework json.RawMessage `json:"framework"`
	} `json:"pipelineDefinition"`
	CompiledPipeline json.RawMessage `json:"compiledPipeline"`

	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	PipelineName         string            `json:"pipelineName"`
	PipelineVersion      string            `json:"pipelineVersion"`
	RunConfigurationName string            `json:"runConfigurationName"`
	ExperimentName       string            `json:"experimentName"`
	Parameters           map[string]string `json:"parameters"`
	Artifacts            json.RawMessage   `json:"artifacts"`
	TriggerIndicator     json.RawMessage   `json:"triggerIndicator"`
	Schedule             *struct {
		CronExpression string `json:"cronExpression"`
		StartTime      string `json:"startTime"`
		EndTime        string `json:"endTime"`
	} `json:"schedule"`
}

// answer is a status code and, for an error, the provider error.
type answer struct {
	code int
	msg  string
}

func (a *answer) forDelete() bool { return strings.Contains(strings.ToLower(a.msg), "delete") }

// reply is the response: its code and JSON body.
type reply struct {
	code int
	body map[string]string
}

func fail(code int, format string, args ...any) reply {
	return reply{code, map[string]string{"providerError": fmt.Sprintf(format, args...)}}
}

// service is the fake provider service.
type service struct {
	provider string
	store    *store
	poster   *poster
	log      *slog.Logger
	now      func() time.Time
	requests atomic.Int64
	// mode is modeDefault or modeKFPOperator.
	mode     string
	triggers *triggerLog
}

func newService(provider string, p *poster, log *slog.Logger) *service {
	return &service{provider: provider, store: newStore(), poster: p, log: log, now: time.Now,
		mode: modeDefault, triggers: newTriggerLog(log)}
}

func (s *service) routes() http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }
	mux.HandleFunc("GET /readyz", ok)
	mux.HandleFunc("GET /livez", ok)
	mux.HandleFunc("GET /fixture/triggers", s.triggers.list)
	mux.HandleFunc("/", s.resource)
	return mux
}

func (s *service) metrics() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE fixture_requests_total counter\nfixture_requests_total %d\n", s.requests.Load())
	})
	return mux
}

// resource answers /resource/... and logs the request and answer as one
// line. A completion the request brings is posted once the answer is sent.
func (s *service) resource(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var kind, id string
	var rep reply
	var pending *completion
	if err != nil {
		rep = fail(http.StatusBadRequest, "reading the body: %v", err)
	} else {
		kind, id, rep, pending = s.dispatch(r, body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rep.body)
	_ = http.NewResponseController(w).Flush()
	if pending != nil {
		s.poster.send(*pending)
	}

	var logged any = string(body)
	if json.Valid(body) {
		logged = json.RawMessage(body)
	}
	s.log.Info("request", "method", r.Method, "path", r.URL.EscapedPath(), "type", kind, "id", id,
		"body", logged, "status", rep.code, "answer", rep.body)
}

// dispatch routes /resource/{type}[/] and /resource/{type}/{id}, and
// returns the completion to post after answering, if any.
func (s *service) dispatch(r *http.Request, body []byte) (kind, id string, rep reply, pending *completion) {
	segs, err := pathSegments(r)
	if err != nil {
		return "", "", fail(http.StatusBadRequest, "%v", err), nil
	}
	if len(segs) < 2 || len(segs) > 3 || segs[0] != "resource" {
		return "", "", fail(http.StatusNotFound, "no route %s %s", r.Method, r.URL.EscapedPath()), nil
	}
	kind = segs[1]
	if !kinds[kind] {
		return kind, "", fail(http.StatusNotFound, "unknown resource type %q", kind), nil
	}
	if len(segs) == 2 || segs[2] == "" {
		if r.Method != http.MethodPost {
			return kind, "", fail(http.StatusMethodNotAllowed, "%s /resource/%s: only POST creates", r.Method, kind), nil
		}
		id, rep, pending = s.create(r, kind, body)
		return kind, id, rep, pending
	}
	id = segs[2]
	switch r.Method {
	case http.MethodPut:
		rep, pending = s.update(r, kind, id, body)
		return kind, id, rep, pending
	case http.MethodDelete:
		if a := s.store.remove(kind, id); a != nil {
			return kind, id, fail(a.code, "%s", a.msg), nil
		}
		return kind, id, reply{http.StatusOK, map[string]string{}}, nil
	}
	return kind, id, fail(http.StatusMethodNotAllowed, "%s /resource/%s/{id}: only PUT and DELETE", r.Method, kind), nil
}

// pathSegments are the request path's segments, each unescaped on its own
// so that an id may hold "%2F". The path is taken from the request line as
// it arrived when there is one (net/http itself refuses most bad escapes
// before this; this is the fixture's own check).
func pathSegments(r *http.Request) ([]string, error) {
	escaped := r.URL.EscapedPath()
	if r.RequestURI != "" {
		u, err := url.ParseRequestURI(r.RequestURI)
		if err != nil {
			return nil, fmt.Errorf("bad request path: %w", err)
		}
		escaped = u.EscapedPath()
	}
	segs := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	for i, seg := range segs {
		s, err := url.PathUnescape(seg)
		if err != nil {
			return nil, fmt.Errorf("bad path segment %q: %w", seg, err)
		}
		segs[i] = s
	}
	return segs, nil
}

func (s *service) create(r *http.Request, kind string, body []byte) (id string, answer reply, pending *completion) {
	res, name, version, doc, rep := decode(kind, body)
	if rep != nil {
		return "", *rep, nil
	}
	defer func() { s.triggers.note(r, kind, id, name, version, res.TriggerIndicator, answer.code) }()
	a, rep := directive(kind, res)
	if rep != nil {
		return "", *rep, nil
	}
	if a != nil && !a.forDelete() {
		return "", fail(a.code, "%s", a.msg), nil
	}
	rec := s.store.create(kind, name, version, doc, a)
	return rec.ID, reply{http.StatusCreated, map[string]string{"id": rec.ID}}, s.complete(rec, res)
}

func (s *service) update(r *http.Request, kind, id string, body []byte) (answer reply, pending *completion) {
	res, name, version, doc, rep := decode(kind, body)
	if rep != nil {
		return *rep, nil
	}
	defer func() { s.triggers.note(r, kind, id, name, version, res.TriggerIndicator, answer.code) }()
	a, rep := directive(kind, res)
	if rep != nil {
		return *rep, nil
	}
	if a != nil && !a.forDelete() {
		return fail(a.code, "%s", a.msg), nil
	}
	if kind == "run" {
		return fail(http.StatusNotImplemented, "run update is not implemented"), nil
	}
	rec := s.store.update(kind, id, name, version, doc, a)
	return reply{http.StatusOK, map[string]string{"id": id}}, s.complete(rec, res)
}

// decode reads a kind's body (JSON, or YAML) and returns it with its name,
// version and JSON form, or the 400 to answer.
func decode(kind string, body []byte) (res resource, name, version string, doc json.RawMessage, rep *reply) {
	bad := func(format string, args ...any) (resource, string, string, json.RawMessage, *reply) {
		r := fail(http.StatusBadRequest, "malformed %s: "+format, append([]any{kind}, args...)...)
		return resource{}, "", "", nil, &r
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return bad("empty body")
	}
	doc = trimmed
	if trimmed[0] != '{' {
		converted, err := yaml.YAMLToJSON(trimmed)
		if err != nil {
			return bad("neither JSON nor YAML: %v", err)
		}
		doc = converted
	}
	if err := json.Unmarshal(doc, &res); err != nil {
		return bad("%v", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc); err == nil {
		doc = buf.Bytes()
	}
	if kind == "pipeline" {
		if res.PipelineDefinition == nil || res.PipelineDefinition.Name == "" {
			return bad("pipelineDefinition.name is required")
		}
		return res, res.PipelineDefinition.Name, res.PipelineDefinition.Version, doc, nil
	}
	if res.Name == "" {
		return bad("name is required")
	}
	return res, res.Name, res.Version, doc, nil
}

// directive is the body's FIXTURE_ANSWER, if any, or the 400 for a bad one.
func directive(kind string, res resource) (*answer, *reply) {
	var value string
	var found bool
	switch kind {
	case "pipeline":
		for _, e := range res.PipelineDefinition.Env {
			if e.Name == directiveName {
				value, found = e.Value, true
			}
		}
	case "run", "runschedule":
		value, found = res.Parameters[directiveName]
	case "experiment":
		value, found = strings.CutPrefix(res.Description, directivePrefix)
	}
	if !found {
		return nil, nil
	}
	code, msg, ok := strings.Cut(value, ":")
	n, err := strconv.Atoi(strings.TrimSpace(code))
	if !ok || err != nil || n < 400 || n > 599 {
		r := fail(http.StatusBadRequest, "%s %q: want <code>:<message> with a code from 400 to 599", directiveName, value)
		return nil, &r
	}
	return &answer{code: n, msg: strings.TrimSpace(msg)}, nil
}

// complete is the completion of a created run, or of a runschedule's
// scheduled run, to post once the create or update is answered.
func (s *service) complete(rec record, res resource) *completion {
	if rec.Kind != "run" && rec.Kind != "runschedule" {
		return nil
	}
	status := "succeeded"
	if res.Parameters[runStatusName] == "failed" {
		status = "failed"
	}
	ev := completion{
		Status: status, PipelineName: res.PipelineName, RunConfigurationName: res.RunConfigurationName,
		RunID: rec.ID, RunStartTime: s.now().UTC().Format(time.RFC3339),
		ServingModelArtifacts: []any{}, Provider: s.provider,
	}
	if rec.Kind == "run" {
		ev.RunName = res.Name
		ev.RunID = s.completionRunID(rec)
	} else {
		ev.RunID = fmt.Sprintf("%s-%d", rec.ID, rec.scheduled)
	}
	ev.PipelineComponents = []component{{Name: "train", ComponentArtifacts: []componentArtifact{{Name: "model",
		Artifacts: []artifactInstance{{URI: "mem://" + ev.RunID + "/train/model", Metadata: map[string]any{"pushed": 1}}}}}}}
	return &ev
}
