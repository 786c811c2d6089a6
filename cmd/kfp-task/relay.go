package main

// The events relay: kfp-operator's provider services POST run-completion
// events, without credentials, to the URL in their OPERATORWEBHOOK. The
// operator points that at this relay, a sidecar of the service, which adds
// the Provider's service-account token and forwards them to the operator's
// /events, answering with the operator's status and body (so a 410 Gone
// reaches the service as one).
//
//	kfp-task relay-events --listen 127.0.0.1:8099 --to URL --token-file FILE [--ca-file FILE]

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const (
	// maxEventBody is the largest event the relay forwards.
	maxEventBody = 256 << 10
	// relayUpstreamTimeout bounds one forward to /events.
	relayUpstreamTimeout = 30 * time.Second
	// maxUpstreamAnswer is how much of the operator's answer is relayed.
	maxUpstreamAnswer = 64 << 10
)

// relayedHeaders are the request headers forwarded besides the token:
// what says how to read the body, and trace context. Ce-* (CloudEvents
// binary mode) headers are forwarded too.
var relayedHeaders = []string{"Content-Type", "Content-Encoding", "Traceparent", "Tracestate"}

// relay forwards events to the operator with a token read from a file.
type relay struct {
	to        string
	tokenFile string
	client    *http.Client
	log       io.Writer
}

func newRelay(to, tokenFile string, tlsConfig *tls.Config) *relay {
	return &relay{
		to: to, tokenFile: tokenFile, log: os.Stderr,
		client: &http.Client{
			Transport: inClusterTransport(tlsConfig),
			Timeout:   relayUpstreamTimeout,
			// The token goes to --to only; a redirect is relayed as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/healthz":
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "only GET /healthz", http.StatusMethodNotAllowed)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	case "/events":
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "only POST /events", http.StatusMethodNotAllowed)
			return
		}
		r.forward(w, req)
	default:
		http.NotFound(w, req)
	}
}

func (r *relay) forward(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	if req.ContentLength > maxEventBody {
		r.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("an event of %d bytes; at most %d are relayed", req.ContentLength, maxEventBody))
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxEventBody+1))
	if err != nil {
		r.refuse(w, http.StatusBadRequest, "reading the event: "+err.Error())
		return
	}
	if len(body) > maxEventBody {
		r.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("an event of more than %d bytes", maxEventBody))
		return
	}
	// Read on every event: the kubelet rotates projected tokens.
	token, err := r.token()
	if err != nil {
		r.refuse(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	up, err := http.NewRequestWithContext(req.Context(), http.MethodPost, r.to, bytes.NewReader(body))
	if err != nil {
		r.refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	for _, h := range relayedHeaders {
		if v := req.Header.Values(h); len(v) > 0 {
			up.Header[h] = v
		}
	}
	for h, v := range req.Header {
		if strings.HasPrefix(h, "Ce-") {
			up.Header[h] = v
		}
	}
	up.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.client.Do(up)
	if err != nil {
		status := http.StatusBadGateway
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			status = http.StatusGatewayTimeout
		}
		r.refuse(w, status, fmt.Sprintf("cannot reach the operator's /events at %s: %v", r.to, err))
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamAnswer))
	if err != nil {
		r.refuse(w, http.StatusBadGateway, fmt.Sprintf("reading the answer of %s (HTTP %d): %v", r.to, resp.StatusCode, err))
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
	fmt.Fprintf(r.log, "kfp-task relay-events: event of %d bytes: %s answered HTTP %d in %s\n",
		len(body), r.to, resp.StatusCode, time.Since(start).Round(time.Millisecond))
}

// refuse answers an event the relay could not deliver, and logs why.
func (r *relay) refuse(w http.ResponseWriter, status int, msg string) {
	fmt.Fprintf(r.log, "kfp-task relay-events: HTTP %d: %s\n", status, msg)
	http.Error(w, "kfp-task relay-events: "+msg, status)
}

func (r *relay) token() (string, error) {
	data, err := os.ReadFile(r.tokenFile)
	if err != nil {
		return "", fmt.Errorf("cannot read the token: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("the token file %s is empty", r.tokenFile)
	}
	return token, nil
}

// relayEvents serves the relay until SIGTERM or SIGINT.
func relayEvents(args []string) error {
	listen, r, err := relayFromFlags(args)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("relay-events: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serveRelay(ctx, ln, r)
}

// relayFromFlags is the address to listen on and the relay the command
// line asks for.
func relayFromFlags(args []string) (string, *relay, error) {
	fs := flag.NewFlagSet("relay-events", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8099", "address to serve POST /events and GET /healthz on")
	to := fs.String("to", "", "the operator's /events URL")
	tokenFile := fs.String("token-file", "", "file holding the service-account token (read for every event)")
	caFile := fs.String("ca-file", "", "PEM certificates to trust for an https --to (default: the system's)")
	if err := fs.Parse(args); err != nil {
		return "", nil, err
	}
	if fs.NArg() > 0 {
		return "", nil, fmt.Errorf("relay-events: unexpected arguments %q", fs.Args())
	}
	if u, err := url.Parse(*to); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("relay-events: --to %q is not an http(s) URL", *to)
	}
	if *tokenFile == "" {
		return "", nil, errors.New("relay-events: --token-file is required")
	}
	var tlsConfig *tls.Config
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return "", nil, fmt.Errorf("relay-events: --ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return "", nil, fmt.Errorf("relay-events: --ca-file %s holds no PEM certificate", *caFile)
		}
		tlsConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return *listen, newRelay(*to, *tokenFile, tlsConfig), nil
}

// serveRelay serves r on ln until ctx ends, then lets events in flight
// finish.
func serveRelay(ctx context.Context, ln net.Listener, r *relay) error {
	srv := &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      relayUpstreamTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(r.log, "kfp-task relay-events: relaying POST http://%s/events to %s\n", ln.Addr(), r.to)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("relay-events: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), relayUpstreamTimeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("relay-events: %w", err)
	}
	return nil
}
