package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// triggerHeaders are the headers earlier kfp-operator versions sent the
// trigger indicator in.
var triggerHeaders = []string{"trigger-type", "trigger-source", "trigger-source-namespace"}

// maxTriggers bounds the trigger log: the oldest entries go first.
const maxTriggers = 4096

// trigger is what one run or runschedule create or update brought of a
// trigger indicator.
type trigger struct {
	// Seq counts every entry noted, from 1, so a gap shows dropped entries.
	Seq     int    `json:"seq"`
	Method  string `json:"method"`
	Kind    string `json:"kind"`
	ID      string `json:"id"` // the path's, or the create's answer; "" for a refused create
	Name    string `json:"name"`
	Version string `json:"version"`
	Status  int    `json:"status"` // what the request was answered
	// Indicator is the body's triggerIndicator as it arrived, absent when
	// the body had none.
	Indicator json.RawMessage `json:"triggerIndicator,omitempty"`
	// Headers are the trigger headers that came (lower-cased names,
	// repeated values joined with ","), absent when none did.
	Headers  map[string]string `json:"headers,omitempty"`
	Received time.Time         `json:"received"`
}

// triggerLog keeps the latest triggers noted.
type triggerLog struct {
	mu      sync.Mutex
	entries []trigger
	seq     int
	log     *slog.Logger
}

func newTriggerLog(log *slog.Logger) *triggerLog { return &triggerLog{log: log} }

// note records what r brought for a run or runschedule, and logs it.
func (l *triggerLog) note(r *http.Request, kind, id, name, version string, indicator json.RawMessage, status int) {
	if kind != "run" && kind != "runschedule" {
		return
	}
	t := trigger{Method: r.Method, Kind: kind, ID: id, Name: name, Version: version, Status: status,
		Received: time.Now().UTC()}
	if len(indicator) > 0 && string(indicator) != "null" {
		t.Indicator = indicator
	}
	for _, h := range triggerHeaders {
		if values := r.Header.Values(h); len(values) > 0 {
			if t.Headers == nil {
				t.Headers = map[string]string{}
			}
			t.Headers[h] = strings.Join(values, ",")
		}
	}
	l.mu.Lock()
	l.seq++
	t.Seq = l.seq
	if len(l.entries) == maxTriggers {
		l.entries = append(l.entries[:0:0], l.entries[1:]...)
	}
	l.entries = append(l.entries, t)
	l.mu.Unlock()
	l.log.Info("trigger", "trigger", t)
}

// all is a copy of the entries, oldest first.
func (l *triggerLog) all() []trigger {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]trigger{}, l.entries...)
}

// list answers GET /fixture/triggers.
func (l *triggerLog) list(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(l.all())
}
