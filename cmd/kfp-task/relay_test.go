package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstream records what the operator's /events received.
type upstream struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	status   int
	answer   string
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = append(u.requests, r)
	u.bodies = append(u.bodies, body)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(u.status)
	_, _ = io.WriteString(w, u.answer)
}

func (u *upstream) last(t *testing.T) (*http.Request, []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	require.NotEmpty(t, u.requests)
	return u.requests[len(u.requests)-1], u.bodies[len(u.bodies)-1]
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

// relayTo starts a relay to target (an upstream URL) with a token file
// holding token, and returns the relay's URL and the token file.
func relayTo(t *testing.T, target, token string) (string, string) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	r := newRelay(target, tokenFile, nil)
	r.log = io.Discard
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv.URL, tokenFile
}

func post(t *testing.T, url, contentType, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(answer)
}

const event = `{"status":"succeeded","pipelineName":"team-a/penguin","runConfigurationName":"team-a/nightly",` +
	`"runName":"team-a/nightly-abc","runId":"r-1","servingModelArtifacts":[],"provider":"team-a/kfp"}`

func TestRelayForwardsWithTheCurrentToken(t *testing.T) {
	up := &upstream{status: http.StatusOK, answer: "recorded"}
	operator := httptest.NewServer(up)
	defer operator.Close()
	relayURL, tokenFile := relayTo(t, operator.URL+"/events", "token-one\n")

	resp, answer := post(t, relayURL+"/events", "application/json", event,
		"Authorization", "Bearer forged", "Ce-Id", "42", "Traceparent", "00-abc-def-01", "X-Other", "dropped")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "recorded", answer)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), "the operator's content type")
	req, body := up.last(t)
	assert.Equal(t, "/events", req.URL.Path)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "Bearer token-one", req.Header.Get("Authorization"), "the file's token, trimmed, never the caller's")
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	assert.Equal(t, "42", req.Header.Get("Ce-Id"))
	assert.Equal(t, "00-abc-def-01", req.Header.Get("Traceparent"))
	assert.Empty(t, req.Header.Get("X-Other"))
	assert.Equal(t, event, string(body), "the event unchanged")

	// The kubelet rotates the projected token: the next event carries the new one.
	require.NoError(t, os.WriteFile(tokenFile+".new", []byte("token-two"), 0o600))
	require.NoError(t, os.Rename(tokenFile+".new", tokenFile))
	resp, _ = post(t, relayURL+"/events", "application/json", event)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	req, _ = up.last(t)
	assert.Equal(t, "Bearer token-two", req.Header.Get("Authorization"))
	assert.Equal(t, 2, up.count())
}

func TestRelayPassesTheOperatorsStatusThrough(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusUnauthorized,
		http.StatusForbidden, http.StatusGone, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		up := &upstream{status: status, answer: http.StatusText(status) + ": from the operator"}
		operator := httptest.NewServer(up)
		relayURL, _ := relayTo(t, operator.URL+"/events", "tok")
		resp, answer := post(t, relayURL+"/events", "application/json", event)
		assert.Equal(t, status, resp.StatusCode)
		assert.Equal(t, http.StatusText(status)+": from the operator", answer)
		operator.Close()
	}
}

func TestRelayPassesARedirectThroughWithoutFollowing(t *testing.T) {
	elsewhere := &upstream{status: http.StatusOK}
	other := httptest.NewServer(elsewhere)
	defer other.Close()
	operator := httptest.NewServer(http.RedirectHandler(other.URL, http.StatusTemporaryRedirect))
	defer operator.Close()
	relayURL, _ := relayTo(t, operator.URL+"/events", "tok")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Post(relayURL+"/events", "application/json", strings.NewReader(event))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	assert.Zero(t, elsewhere.count(), "the token goes to --to only")
}

func TestRelayRefusals(t *testing.T) {
	up := &upstream{status: http.StatusOK}
	operator := httptest.NewServer(up)
	defer operator.Close()
	relayURL, tokenFile := relayTo(t, operator.URL+"/events", "tok")

	t.Run("an event at the limit", func(t *testing.T) {
		resp, _ := post(t, relayURL+"/events", "application/json", strings.Repeat("x", maxEventBody))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		_, body := up.last(t)
		assert.Len(t, body, maxEventBody)
	})
	before := up.count()
	t.Run("an event over the limit", func(t *testing.T) {
		resp, answer := post(t, relayURL+"/events", "application/json", strings.Repeat("x", maxEventBody+1))
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Contains(t, answer, "at most 262144")
	})
	t.Run("an event over the limit, chunked", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write([]byte(strings.Repeat("y", maxEventBody+10)))
			_ = pw.Close()
		}()
		resp, err := http.Post(relayURL+"/events", "application/json", pr)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	})
	t.Run("methods and paths", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			status       int
			allow        string
		}{
			{http.MethodGet, "/events", http.StatusMethodNotAllowed, "POST"},
			{http.MethodPut, "/events", http.StatusMethodNotAllowed, "POST"},
			{http.MethodDelete, "/events", http.StatusMethodNotAllowed, "POST"},
			{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "GET, HEAD"},
			{http.MethodPost, "/", http.StatusNotFound, ""},
			{http.MethodPost, "/events/x", http.StatusNotFound, ""},
			{http.MethodGet, "/healthz", http.StatusOK, ""},
			{http.MethodHead, "/healthz", http.StatusOK, ""},
		} {
			req, err := http.NewRequest(c.method, relayURL+c.path, nil)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, c.status, resp.StatusCode, "%s %s", c.method, c.path)
			assert.Equal(t, c.allow, resp.Header.Get("Allow"), "%s %s", c.method, c.path)
		}
	})
	t.Run("no token", func(t *testing.T) {
		require.NoError(t, os.WriteFile(tokenFile, []byte(" \n"), 0o600))
		resp, answer := post(t, relayURL+"/events", "application/json", event)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Contains(t, answer, "is empty")
		require.NoError(t, os.Remove(tokenFile))
		resp, answer = post(t, relayURL+"/events", "application/json", event)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Contains(t, answer, "cannot read the token")
		assert.NotContains(t, answer, "tok\n")
	})
	assert.Equal(t, before, up.count(), "nothing refused was forwarded")
}

func TestRelayUpstreamUnreachable(t *testing.T) {
	relayURL, _ := relayTo(t, "http://"+freeAddress(t)+"/events", "tok")
	resp, answer := post(t, relayURL+"/events", "application/json", event)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Contains(t, answer, "cannot reach the operator's /events at http://")
	assert.Contains(t, answer, "connection refused")
}

func TestRelayUpstreamTimeout(t *testing.T) {
	release := make(chan struct{})
	operator := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer operator.Close()
	defer close(release)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("tok"), 0o600))
	r := newRelay(operator.URL+"/events", tokenFile, nil)
	r.log = io.Discard
	r.client.Timeout = 100 * time.Millisecond
	srv := httptest.NewServer(r)
	defer srv.Close()
	resp, answer := post(t, srv.URL+"/events", "application/json", event)
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode)
	assert.Contains(t, answer, "cannot reach the operator's /events")
}

func TestRelayTrustsTheGivenCA(t *testing.T) {
	up := &upstream{status: http.StatusOK, answer: "ok"}
	operator := httptest.NewTLSServer(up)
	defer operator.Close()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: operator.Certificate().Raw}), 0o600))
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("tok"), 0o600))

	untrusting := newRelay(operator.URL+"/events", tokenFile, nil)
	untrusting.log = io.Discard
	srv := httptest.NewServer(untrusting)
	defer srv.Close()
	resp, _ := post(t, srv.URL+"/events", "application/json", event)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode, "an unknown CA")

	pool := x509.NewCertPool()
	pool.AddCert(operator.Certificate())
	trusting := newRelay(operator.URL+"/events", tokenFile, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	trusting.log = io.Discard
	srv2 := httptest.NewServer(trusting)
	defer srv2.Close()
	resp, _ = post(t, srv2.URL+"/events", "application/json", event)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The command line's --ca-file reaches the same configuration.
	listen, fromFlags, err := relayFromFlags([]string{"--listen", "127.0.0.1:0", "--to", operator.URL + "/events", "--token-file", tokenFile, "--ca-file", caFile})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", listen)
	fromFlags.log = io.Discard
	srv3 := httptest.NewServer(fromFlags)
	defer srv3.Close()
	resp, _ = post(t, srv3.URL+"/events", "application/json", event)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestServeRelayStopsOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := newRelay("http://127.0.0.1:1/events", "/nonexistent", nil)
	r.log = io.Discard
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveRelay(ctx, ln, r) }()
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the relay did not stop")
	}
}

func TestRelayEventsFlags(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", tokenFile}, `--to "" is not an http(s) URL`},
		{[]string{"--to", "operator:8443/events", "--token-file", tokenFile}, "is not an http(s) URL"},
		{[]string{"--to", "http://op/events"}, "--token-file is required"},
		{[]string{"--to", "http://op/events", "--token-file", tokenFile, "extra"}, "unexpected arguments"},
		{[]string{"--to", "http://op/events", "--token-file", tokenFile, "--ca-file", "/nonexistent"}, "--ca-file"},
		{[]string{"--to", "http://op/events", "--token-file", tokenFile, "--ca-file", notPEM}, "holds no PEM certificate"},
		{[]string{"--to", "http://op/events", "--token-file", tokenFile, "--listen", "256.0.0.1:bad"}, "relay-events:"},
	} {
		err := run(append([]string{"relay-events"}, c.args...), os.Getenv)
		require.Error(t, err, "%q", c.args)
		assert.Contains(t, err.Error(), c.want, "%q", c.args)
	}
}
