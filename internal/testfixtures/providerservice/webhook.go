package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// completion is kfp-operator's RunCompletionEventData.
type completion struct {
	Status                string      `json:"status"`
	PipelineName          string      `json:"pipelineName"`
	RunConfigurationName  string      `json:"runConfigurationName,omitempty"`
	RunName               string      `json:"runName,omitempty"`
	RunID                 string      `json:"runId"`
	RunStartTime          string      `json:"runStartTime"`
	RunEndTime            string      `json:"runEndTime"`
	ServingModelArtifacts []any       `json:"servingModelArtifacts"`
	PipelineComponents    []component `json:"pipelineComponents"`
	Provider              string      `json:"provider"`
}

type component struct {
	Name               string              `json:"name"`
	ComponentArtifacts []componentArtifact `json:"componentArtifacts"`
}

type componentArtifact struct {
	Name      string             `json:"name"`
	Artifacts []artifactInstance `json:"artifacts"`
}

type artifactInstance struct {
	URI      string         `json:"uri"`
	Metadata map[string]any `json:"metadata"`
}

// poster posts completions to the operator's webhook, each in its own
// goroutine: after delay (the run "runs"), then until it is taken (2xx),
// refused (410, or any other 4xx but 408, 409, 425 and 429: the operator
// answers 409 while the Run has no backend id yet) or giveUp has passed,
// waiting first, then twice as long each time, at most max. With once (mode
// kfp-operator), a completion is posted one time only, whatever the answer.
type poster struct {
	ctx    context.Context
	url    string
	client *http.Client
	log    *slog.Logger

	delay, first, max, giveUp time.Duration
	once                      bool

	wg sync.WaitGroup
}

func newPoster(ctx context.Context, url string, log *slog.Logger) *poster {
	return &poster{ctx: ctx, url: url, client: &http.Client{Timeout: 10 * time.Second}, log: log,
		delay: 2 * time.Second, first: time.Second, max: 30 * time.Second, giveUp: 10 * time.Minute}
}

func (p *poster) send(ev completion) {
	if p.url == "" {
		p.log.Info("webhook", "runId", ev.RunID, "outcome", "OPERATORWEBHOOK is not set: not posted")
		return
	}
	p.wg.Go(func() { p.deliver(ev) })
}

func (p *poster) deliver(ev completion) {
	if !p.sleep(p.delay) {
		return
	}
	ev.RunEndTime = time.Now().UTC().Format(time.RFC3339)
	body, _ := json.Marshal(ev)
	deadline := time.Now().Add(p.giveUp)
	wait := p.first
	for attempt := 1; ; attempt++ {
		code, answer, err := p.post(body)
		fields := []any{"url", p.url, "runId", ev.RunID, "attempt", attempt, "status", code, "answer", answer}
		switch {
		case p.once:
			outcome := "posted once: not retried"
			if err != nil {
				fields = append(fields, "error", err.Error())
			} else if code >= 200 && code < 300 {
				outcome = "delivered"
			}
			p.log.Info("webhook", append(fields, "outcome", outcome, "event", json.RawMessage(body))...)
			return
		case err != nil:
			fields = append(fields, "error", err.Error())
		case code >= 200 && code < 300:
			p.log.Info("webhook", append(fields, "outcome", "delivered", "event", json.RawMessage(body))...)
			return
		case !retryable(code):
			p.log.Info("webhook", append(fields, "outcome", "refused: not retrying")...)
			return
		}
		if time.Now().Add(wait).After(deadline) {
			p.log.Info("webhook", append(fields, "outcome", "giving up")...)
			return
		}
		p.log.Info("webhook", append(fields, "outcome", "retrying in "+wait.String())...)
		if !p.sleep(wait) {
			return
		}
		wait = min(2*wait, p.max)
	}
}

func retryable(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return code >= 500
}

// post sends body once and returns the status and the start of the answer.
func (p *poster) post(body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode, string(answer), nil
}

// sleep waits d, or returns false when the fixture is shutting down.
func (p *poster) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}
