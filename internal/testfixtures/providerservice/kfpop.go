package main

import (
	"fmt"
	"time"
)

// Modes of the fixture (see the package doc).
const (
	modeDefault     = "default"
	modeKFPOperator = "kfp-operator"
)

// Delays before a completion is posted, by mode.
const (
	defaultCompletionDelay     = 2 * time.Second
	kfpOperatorCompletionDelay = 0
)

// setMode reads the mode and the completion delay from the environment:
// FIXTURE_MODE and FIXTURE_COMPLETION_DELAY, or else the Provider
// parameters fixtureMode and fixtureCompletionDelay as the operator passes
// them (PARAMETERS_<KEY>, upper-cased).
func (cfg *config) setMode(env map[string]string) error {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := env[k]; v != "" {
				return v
			}
		}
		return ""
	}
	cfg.Mode = first("FIXTURE_MODE", "PARAMETERS_FIXTUREMODE")
	cfg.CompletionDelay = defaultCompletionDelay
	switch cfg.Mode {
	case "", modeDefault:
		cfg.Mode = modeDefault
	case modeKFPOperator:
		cfg.CompletionDelay = kfpOperatorCompletionDelay
	default:
		return fmt.Errorf("fixture mode %q: want %q or %q", cfg.Mode, modeDefault, modeKFPOperator)
	}
	if v := first("FIXTURE_COMPLETION_DELAY", "PARAMETERS_FIXTURECOMPLETIONDELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("completion delay %q: want a Go duration such as 0s or 500ms", v)
		}
		cfg.CompletionDelay = d
	}
	return nil
}

// useKFPOperatorBehaviour gives s kfp-operator's id behaviour: a run create
// answers <ns>-<name> (Vertex AI's service's answer), and completions are
// posted once, never retried (kfp-operator's stub service's way; its
// services' webhook sink also posts once, but Pub/Sub redelivers what was
// not taken). Call it before serving.
func (s *service) useKFPOperatorBehaviour() {
	s.mode = modeKFPOperator
	s.store.runIDIsName = true
	s.poster.once = true
}

// completionRunID is the runId a run's completion carries: in mode
// kfp-operator the Vertex AI pipeline job's id, <create's id>-<version>,
// which is not the id the create answered; otherwise that id.
func (s *service) completionRunID(rec record) string {
	if s.mode == modeKFPOperator {
		return rec.ID + "-" + rec.Version
	}
	return rec.ID
}
