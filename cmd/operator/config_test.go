package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
)

func noExtra(*flag.FlagSet) {}

func TestConfigFileThenFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(file, []byte("workflowNamespace: kfp-workflows\nmaxConcurrentReconciles: 8\nsyncPeriod: 1h\n"), 0o644))

	cfg, err := parseConfig([]string{"--config", file, "--max-concurrent-reconciles", "2"}, noExtra)
	require.NoError(t, err)
	assert.Equal(t, "kfp-workflows", cfg.WorkflowNamespace, "from the file")
	assert.Equal(t, 2, cfg.MaxConcurrentReconciles, "the flag wins over the file")
	assert.Equal(t, time.Hour, cfg.SyncPeriod.Duration)
	assert.Equal(t, ":8081", cfg.HealthProbeBindAddress, "default kept")
	assert.False(t, cfg.LeaderElection)
	assert.Equal(t, 3, cfg.KeepRunsPerOperation, "default")
}

func TestConfigErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(file, []byte("workflowNamespaces: typo\n"), 0o644))
	_, err := parseConfig([]string{"--config", file}, noExtra)
	assert.ErrorContains(t, err, "workflowNamespaces")

	_, err = parseConfig([]string{"--kube-api-qps", "0"}, noExtra)
	assert.ErrorContains(t, err, "must be positive")
	_, err = parseConfig([]string{"--max-concurrent-reconciles", "-1"}, noExtra)
	assert.ErrorContains(t, err, "must be positive")
	_, err = parseConfig([]string{"--keep-runs-per-operation", "-1"}, noExtra)
	assert.ErrorContains(t, err, "must not be negative")
	_, err = parseConfig([]string{"--config", filepath.Join(t.TempDir(), "absent.yaml")}, noExtra)
	assert.Error(t, err)
}

func TestEventSinks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(file, []byte("eventSinks:\n- name: serving\n  url: https://updater.serving.svc/events\n"), 0o644))
	cfg, err := parseConfig([]string{"--config", file, "--event-sink", "audit=http://audit.ops.svc:8080/"}, noExtra)
	require.NoError(t, err)
	assert.Equal(t, []operator.EventSink{{Name: "serving", URL: "https://updater.serving.svc/events"}, {Name: "audit", URL: "http://audit.ops.svc:8080/"}},
		cfg.EventSinks, "flags add to the file's")
	assert.Equal(t, ":8082", cfg.EventsBindAddress)

	for args, says := range map[string]string{
		"audit":                           "want NAME=URL",
		"audit=ftp://x/":                  "must be absolute http",
		"audit=/events":                   "must be absolute http",
		"Audit=http://x/":                 `event sink name "Audit"`,
		"audit=http://x/,audit=http://y/": "used twice",
	} {
		var flags []string
		for _, a := range strings.Split(args, ",") {
			flags = append(flags, "--event-sink", a)
		}
		_, err := parseConfig(flags, noExtra)
		assert.ErrorContains(t, err, says, args)
	}
}
