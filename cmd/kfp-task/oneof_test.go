package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOneOfPublishesAndSelectsTheBranchThatRan(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "results", "Output")
	require.NoError(t, os.MkdirAll(filepath.Dir(result), 0o755))
	require.NoError(t, os.WriteFile(result, []byte("Got heads!"), 0o644))
	heads := filepath.Join(dir, "run", "heads", "oneof", "Output")
	tails := filepath.Join(dir, "run", "tails", "oneof", "Output")

	require.NoError(t, run([]string{"oneof", "publish", result, heads}, os.Getenv))
	selected := filepath.Join(dir, "selected")
	require.NoError(t, run([]string{"oneof", "select", selected, heads, tails}, os.Getenv))
	got, err := os.ReadFile(selected)
	require.NoError(t, err)
	assert.Equal(t, "Got heads!", string(got))

	assert.ErrorContains(t, oneof([]string{"select", selected, tails}), "no branch produced the dsl.OneOf value")
	require.NoError(t, oneof([]string{"publish", result, tails}))
	assert.ErrorContains(t, oneof([]string{"select", selected, heads, tails}), "more than one branch")
	assert.ErrorContains(t, oneof([]string{"publish", filepath.Join(dir, "nope"), tails}), "the task's result")
	assert.ErrorContains(t, oneof([]string{"publish", result, "relative"}), "not an absolute path")
	assert.ErrorContains(t, oneof([]string{"pick"}), "want publish")
}
