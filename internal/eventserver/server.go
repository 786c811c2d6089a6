// Package eventserver serves /events, where provider services report run
// completions in kfp-operator's RunCompletionEventData format (plain JSON,
// or a structured-mode CloudEvent carrying it).
//
// Callers are authenticated by a Kubernetes service-account token in
// `Authorization: Bearer …`, checked with a TokenReview for the configured
// audience, and authorised as the service account of the Provider the
// event names (in the Provider's namespace or its workflow namespace);
// that Provider must be the one the named Run runs on or RunConfiguration
// names. So a tenant can complete only runs of its own Provider. As in
// kfp-operator, a completion is keyed by the Run's name: its runId need
// not be the create's id, and it may come before that id is recorded.
//
// Answers: 200 applied (or already applied), 400 malformed (the body says
// what), 401 no valid token, 403 not the named Provider's account or
// resource, 409 the Run already completed as another state, 410 no such
// Run or RunConfiguration, 413 too large, 503 too busy (with Retry-After;
// see Limits).
package eventserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/completion"
)

// MaxBody bounds a request body: an event's data may hold 32 KiB, and a
// CloudEvent envelope and JSON escaping add to it.
const MaxBody = 256 << 10

// Server is the /events endpoint, run by the manager on every replica
// (it only writes status, which any replica may).
type Server struct {
	BindAddress string
	// CertDir holds tls.crt and tls.key; empty serves plain HTTP.
	CertDir string
	Handler *Handler
}

// NeedLeaderElection is false: every replica behind the Service answers.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("events")
	mux := http.NewServeMux()
	mux.Handle("/events", s.Handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	ln, err := net.Listen("tcp", s.BindAddress)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if s.CertDir != "" {
		cw, err := certwatcher.New(filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key"))
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		go func() {
			if err := cw.Start(ctx); err != nil {
				log.Error(err, "watching the certificate")
			}
		}()
		ln = tls.NewListener(ln, &tls.Config{GetCertificate: cw.GetCertificate, MinVersion: tls.VersionTLS12})
	}
	log.Info("serving /events", "address", ln.Addr().String(), "tls", s.CertDir != "")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Handler applies posted completions.
type Handler struct {
	// Client reads Runs, RunConfigurations and Providers (the cache) and
	// creates TokenReviews.
	Client      client.Client
	Audience    string
	Completions *completion.Recorder
	// Limits bounds the work taken on at once; zero fields take defaults.
	Limits Limits
	// Now is the token cache's clock; nil is time.Now.
	Now func() time.Time

	setup  sync.Once
	guards *guards
}

// guards are what a Handler bounds its work with, made on first use (the
// Handler's zero value works).
type guards struct {
	limits  Limits
	reviews *reviewCache
	// Lanes, see Limits.
	unknownTokens, familiarTokens, applying *lane
}

func (h *Handler) guarded() *guards {
	h.setup.Do(func() {
		l := h.Limits.withDefaults()
		now := h.Now
		if now == nil {
			now = time.Now
		}
		h.guards = &guards{limits: l,
			reviews:        newReviewCache(l.CacheSize, l.CacheTTL, l.RememberFor, now),
			unknownTokens:  newLane("unknown-tokens", "checking the tokens of other callers", l.Reviews),
			familiarTokens: newLane("familiar-tokens", "checking the tokens of known callers again", l.FamiliarReviews),
			applying:       newLane("applying", "applying other completions", l.Applying),
		}
	})
	return h.guards
}
