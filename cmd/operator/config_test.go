package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
