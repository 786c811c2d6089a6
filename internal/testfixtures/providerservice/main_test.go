package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFromEnv(t *testing.T) {
	cfg, err := configFromEnv([]string{"PROVIDERNAME=team-a/tekton", "OPERATORWEBHOOK=http://127.0.0.1:8099/events",
		"POD_NAMESPACE=workflows", "PIPELINEROOTSTORAGE=gs://root", "PARAMETERS_PROJECT=p=1", "PATH=/bin"})
	require.NoError(t, err)
	assert.Equal(t, config{ServerPort: "8080", MetricsPort: "8081", Provider: "team-a/tekton",
		Webhook: "http://127.0.0.1:8099/events", PodNamespace: "workflows", PipelineRootStorage: "gs://root",
		Parameters: map[string]string{"PROJECT": "p=1"}, Mode: "default", CompletionDelay: 2 * time.Second}, cfg)

	cfg, err = configFromEnv([]string{"PROVIDERNAME=tekton", "POD_NAMESPACE=team-b", "SERVER_PORT=9000", "METRICS_PORT=9001"})
	require.NoError(t, err)
	assert.Equal(t, "team-b/tekton", cfg.Provider, "a bare name is in the pod's namespace")
	assert.Equal(t, "9000", cfg.ServerPort)
	assert.Equal(t, "9001", cfg.MetricsPort)

	_, err = configFromEnv(nil)
	assert.EqualError(t, err, "PROVIDERNAME is not set")
	_, err = configFromEnv([]string{"PROVIDERNAME=a/b", "SERVER_PORT=http"})
	assert.EqualError(t, err, `port "http" is not a port number`)
}

func TestShutsDownWhenTold(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{ServerPort: "0", MetricsPort: "0", Provider: "a/b", Parameters: map[string]string{"K": "v"}}, &out)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("still serving")
	}
	assert.Contains(t, out.String(), `"parameters":{"K":"v"}`)
	assert.Contains(t, out.String(), "shutting down")
}
