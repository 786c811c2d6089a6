package publish

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// received is one request a test sink got.
type received struct {
	header http.Header
	body   string
}

// sinkAnswering records every request and answers status.
func sinkAnswering(t *testing.T, status int) (*httptest.Server, chan received) {
	got := make(chan received, 10)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: string(body)}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "sink says hi")
	}))
	t.Cleanup(s.Close)
	return s, got
}

func TestSendPostsABinaryModeCloudEvent(t *testing.T) {
	// Escaped and unescaped HTML characters, spacing and key order that
	// re-encoding would change.
	data := "{\"b\": \"$$ <&> \\u003c ünï 🚀\",\n \"a\": [1, 2.50]}\n"
	ev := pipelinesv1beta1.PendingCompletionEvent{ID: "run-1", Source: "team-a/kfp", Data: data,
		Time: metav1.NewTime(time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC))}
	s, got := sinkAnswering(t, http.StatusAccepted)
	snd, err := newSender(&http.Client{Timeout: 5 * time.Second})
	require.NoError(t, err)

	require.NoError(t, snd.send(context.Background(), s.URL, cloudEvent(ev, "Run team-a/train")))
	r := <-got
	assert.Equal(t, data, r.body, "the stored bytes, unchanged")
	assert.Equal(t, "1.0", r.header.Get("ce-specversion"))
	assert.Equal(t, "run-1", r.header.Get("ce-id"))
	assert.Equal(t, "team-a/kfp", r.header.Get("ce-source"))
	assert.Equal(t, "org.kubeflow.pipelines.run-completion", r.header.Get("ce-type"))
	assert.Equal(t, "2026-05-01T12:30:00Z", r.header.Get("ce-time"))
	assert.Equal(t, "Run team-a/train", r.header.Get("ce-kfpresource"))
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
}

func TestSendFailsUnless2xx(t *testing.T) {
	snd, err := newSender(&http.Client{Timeout: 5 * time.Second})
	require.NoError(t, err)
	ev := cloudEvent(pipelinesv1beta1.PendingCompletionEvent{ID: "run-1", Source: "team-a/kfp", Data: "{}",
		Time: metav1.Now()}, "Run team-a/train")
	for _, tc := range []struct {
		status int
		err    string
	}{
		{status: http.StatusOK},
		{status: http.StatusNoContent},
		{status: http.StatusMovedPermanently, err: "HTTP 301"},
		{status: http.StatusBadRequest, err: "HTTP 400"},
		{status: http.StatusServiceUnavailable, err: "HTTP 503"},
	} {
		s, _ := sinkAnswering(t, tc.status)
		err := snd.send(context.Background(), s.URL+"/?token=secret", ev)
		if tc.err == "" {
			assert.NoError(t, err, "%d", tc.status)
			continue
		}
		if assert.Error(t, err, "%d", tc.status) {
			assert.Contains(t, err.Error(), tc.err)
			assert.Contains(t, err.Error(), "sink says hi", "the answer's body tells why")
			assert.NotContains(t, err.Error(), "secret", "errors reach conditions: no URL")
		}
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	err = snd.send(context.Background(), down.URL+"/?token=secret", ev)
	if assert.Error(t, err, "nobody listening") {
		assert.Contains(t, err.Error(), "connection refused")
		assert.NotContains(t, err.Error(), "secret")
	}
}
