// Command providerservice is a TEST FIXTURE, not a product backend: a
// controllable fake of kfp-operator's provider service (its v1beta1
// provider-service HTTP API), which the end-to-end suite runs as a
// Provider's spec.serviceImage so that every kind's lifecycle goes through
// that API and run completions come back as a real provider service sends
// them.
//
// Configuration comes from the environment kfp-operator gives a provider
// service: SERVER_PORT (default 8080), METRICS_PORT (default 8081, GET
// /metrics), PROVIDERNAME ("namespace/name", or a name that POD_NAMESPACE
// qualifies), OPERATORWEBHOOK (where run completions are posted),
// POD_NAMESPACE, PIPELINEROOTSTORAGE and PARAMETERS_<KEY> (logged, not used).
//
// API: GET /readyz and /livez; POST /resource/{type} → 201 {"id"}; PUT
// /resource/{type}/{id} → 200 {"id"}; DELETE /resource/{type}/{id} → 200 {}
// for type pipeline, run, runschedule or experiment (others 404). The id is
// path-escaped. Errors are {"providerError": "…"}: 400 for a malformed body
// or path, 501 for a run update. Bodies are JSON (or YAML).
//
// Ids are readable and deterministic:
//
//	pipeline     <ns>-<name>                (kept by updates and new versions)
//	experiment   experiments/<ns>-<name>    (has a "/", so escaping is exercised)
//	runschedule  schedule-<ns>-<name>
//	run          run-<ns>-<name>-<n>        (n counts creates of that run)
//
// Failure injection is driven by the resource itself, with a FIXTURE_ANSWER
// directive whose value is "<code>:<message>" (code 400 to 599):
//
//	pipeline     an env entry     {"name": "FIXTURE_ANSWER", "value": "400:bad pipeline image"}
//	run, runschedule  a parameter "FIXTURE_ANSWER": "500:backend down"
//	experiment   a description starting "FIXTURE_ANSWER=501:not here"
//
// The create or update then answers that code with {"providerError":
// "<message>"} and stores nothing. A directive whose message contains
// "delete" (any case) is for the delete instead: the create or update
// succeeds, the fixture remembers it for the id, and DELETE of that id
// answers it until an update without the directive replaces it. A
// parameter FIXTURE_RUN_STATUS=failed makes a run's completion "failed".
//
// After a run create, and a runschedule create or update, the fixture posts
// a run-completion event (kfp-operator's RunCompletionEventData) to
// OPERATORWEBHOOK about 2 s after answering, retrying with backoff (see
// webhook.go). A scheduled run's id is <schedule id>-<n>: 1 on create,
// counting up with each update that brings a new version; its completion
// names the RunConfiguration and no Run.
//
// Mode "kfp-operator" (FIXTURE_MODE=kfp-operator, or the Provider parameter
// fixtureMode: kfp-operator, which the operator passes as
// PARAMETERS_FIXTUREMODE) behaves as kfp-operator's own services do with
// ids and completions (see kfpop.go): a run create answers <ns>-<name>, as
// Vertex AI's service does, while the completion posted for it carries
// runId <ns>-<name>-<version>, the Vertex AI pipeline job's id; and every
// completion is posted exactly once, right after the create or update is
// answered (before the operator can have recorded the answered id), and is
// never retried whatever the answer, which is logged (as kfp-operator's stub
// service does; its Vertex AI service's posts are redelivered by Pub/Sub
// until taken or answered 410, which this fixture does not model). The
// delay before posting is FIXTURE_COMPLETION_DELAY (or the parameter
// fixtureCompletionDelay, a Go duration): 2s by default, 0 in mode
// kfp-operator. Other kinds' ids are as above in both modes.
//
// Trigger indicators: every run and runschedule create and update records
// the triggerIndicator of its body (kfp-operator's {"type", "source",
// "sourceNamespace"}, verbatim) and its trigger-type, trigger-source and
// trigger-source-namespace headers (how earlier kfp-operator versions sent
// it), in both modes. GET /fixture/triggers on the API port lists them as
// JSON, oldest first (at most the latest 4096), and each is also logged as
// a "trigger" line, for tests that can only read the pod's log.
//
// Every request is logged to stdout as one JSON line (method, path, type,
// decoded id, body as received, status and answer), and so is every
// webhook attempt, so a test can read the pod's log to see what arrived.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what the fixture reads from the environment.
type config struct {
	ServerPort          string            `json:"serverPort"`
	MetricsPort         string            `json:"metricsPort"`
	Provider            string            `json:"provider"`
	Webhook             string            `json:"webhook"`
	PodNamespace        string            `json:"podNamespace"`
	PipelineRootStorage string            `json:"pipelineRootStorage"`
	Parameters          map[string]string `json:"parameters"`
	// Mode is "default" or "kfp-operator" (see the package doc).
	Mode string `json:"mode"`
	// CompletionDelay is how long after answering a completion is posted.
	CompletionDelay time.Duration `json:"completionDelay"`
}

func configFromEnv(environ []string) (config, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg := config{
		ServerPort: env["SERVER_PORT"], MetricsPort: env["METRICS_PORT"],
		Webhook: env["OPERATORWEBHOOK"], PodNamespace: env["POD_NAMESPACE"],
		PipelineRootStorage: env["PIPELINEROOTSTORAGE"], Parameters: map[string]string{},
	}
	for k, v := range env {
		if key, ok := strings.CutPrefix(k, "PARAMETERS_"); ok {
			cfg.Parameters[key] = v
		}
	}
	if cfg.ServerPort == "" {
		cfg.ServerPort = "8080"
	}
	if cfg.MetricsPort == "" {
		cfg.MetricsPort = "8081"
	}
	for _, port := range []string{cfg.ServerPort, cfg.MetricsPort} {
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return config{}, fmt.Errorf("port %q is not a port number", port)
		}
	}
	if err := cfg.setMode(env); err != nil {
		return config{}, err
	}
	cfg.Provider = env["PROVIDERNAME"]
	if cfg.Provider == "" {
		return config{}, errors.New("PROVIDERNAME is not set")
	}
	if !strings.Contains(cfg.Provider, "/") && cfg.PodNamespace != "" {
		cfg.Provider = cfg.PodNamespace + "/" + cfg.Provider
	}
	return cfg, nil
}

func main() {
	cfg, err := configFromEnv(os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture provider service:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fixture provider service:", err)
		os.Exit(1)
	}
}

// newConfiguredService is the service cfg describes, posting until ctx ends.
func newConfiguredService(ctx context.Context, cfg config, log *slog.Logger) *service {
	p := newPoster(ctx, cfg.Webhook, log)
	p.delay = cfg.CompletionDelay
	s := newService(cfg.Provider, p, log)
	if cfg.Mode == modeKFPOperator {
		s.useKFPOperatorBehaviour()
	}
	return s
}

// run serves the API and the metrics until ctx ends, then shuts down.
func run(ctx context.Context, cfg config, out io.Writer) error {
	log := slog.New(slog.NewJSONHandler(out, nil))
	log.Info("fixture provider service starting", "config", cfg)

	s := newConfiguredService(ctx, cfg, log)
	servers := []*http.Server{
		{Addr: ":" + cfg.ServerPort, Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second},
		{Addr: ":" + cfg.MetricsPort, Handler: s.metrics(), ReadHeaderTimeout: 10 * time.Second},
	}
	errs := make(chan error, len(servers))
	for _, srv := range servers {
		go func() {
			if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}()
	}
	var failed error
	select {
	case <-ctx.Done():
		log.Info("fixture provider service shutting down")
	case failed = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdown); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}
