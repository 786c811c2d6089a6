package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// record is what the fixture holds for one resource in the backend.
type record struct {
	Kind    string
	ID      string
	Name    string
	Version string
	Body    json.RawMessage // as JSON, even when it arrived as YAML
	// deleteAnswer is a FIXTURE_ANSWER for the delete, from the last
	// create or update.
	deleteAnswer *answer
	// scheduled numbers a runschedule's latest scheduled run.
	scheduled int
}

// store is the fake backend: records by kind and id.
type store struct {
	mu      sync.Mutex
	records map[string]map[string]*record
	runs    map[string]int // run name → runs created
	// runIDIsName: a run's id is <ns>-<name> (mode kfp-operator).
	runIDIsName bool
}

func newStore() *store {
	return &store{records: map[string]map[string]*record{}, runs: map[string]int{}}
}

// slug is a "namespace/name" as "namespace-name".
func slug(name string) string { return strings.ReplaceAll(name, "/", "-") }

// create stores a new resource and returns its id and record.
func (s *store) create(kind, name, version string, body json.RawMessage, deleteAnswer *answer) record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id string
	switch kind {
	case "pipeline":
		id = slug(name)
	case "experiment":
		id = "experiments/" + slug(name)
	case "runschedule":
		id = "schedule-" + slug(name)
	case "run":
		s.runs[name]++
		id = fmt.Sprintf("run-%s-%d", slug(name), s.runs[name])
		if s.runIDIsName {
			id = slug(name)
		}
	}
	scheduled := 1
	if old, ok := s.records[kind][id]; ok {
		scheduled = old.scheduled + 1
	}
	return s.put(&record{Kind: kind, ID: id, Name: name, Version: version, Body: body,
		deleteAnswer: deleteAnswer, scheduled: scheduled})
}

// update replaces the resource with id (the fixture may have restarted and
// forgotten it: then it is stored afresh). A runschedule's scheduled run
// counts up when the version changes.
func (s *store) update(kind, id, name, version string, body json.RawMessage, deleteAnswer *answer) record {
	s.mu.Lock()
	defer s.mu.Unlock()
	scheduled := 1
	if old, ok := s.records[kind][id]; ok {
		scheduled = old.scheduled
		if old.Version != version {
			scheduled++
		}
	}
	return s.put(&record{Kind: kind, ID: id, Name: name, Version: version, Body: body,
		deleteAnswer: deleteAnswer, scheduled: scheduled})
}

func (s *store) put(r *record) record {
	if s.records[r.Kind] == nil {
		s.records[r.Kind] = map[string]*record{}
	}
	s.records[r.Kind][r.ID] = r
	return *r
}

// remove deletes the resource unless it holds an answer for its delete,
// which it returns instead. Deleting what is not there succeeds.
func (s *store) remove(kind, id string) *answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.records[kind][id]; ok && r.deleteAnswer != nil {
		return r.deleteAnswer
	}
	delete(s.records[kind], id)
	return nil
}

// get returns the record of kind and id.
func (s *store) get(kind, id string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[kind][id]
	if !ok {
		return record{}, false
	}
	return *r, true
}
