package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestItemsWritesArrayResults(t *testing.T) {
	dir := t.TempDir()
	whole, a := filepath.Join(dir, "whole"), filepath.Join(dir, "a")
	require.NoError(t, run([]string{"items", "--list", `[{"a": 1, "b": "x"}, {"a": 2.5, "b": "y"}]`,
		"--result", "", whole, "--result", `parseJson(string_value)["a"]`, a}, os.Getenv))
	got, _ := os.ReadFile(whole)
	assert.JSONEq(t, `["{\"a\":1,\"b\":\"x\"}", "{\"a\":2.5,\"b\":\"y\"}"]`, string(got))
	got, _ = os.ReadFile(a)
	assert.JSONEq(t, `["1", "2.5"]`, string(got))

	// A list given as text holding JSON (a STRING output of a task), and
	// items of every kind: strings as they are, numbers without a fraction.
	require.NoError(t, run([]string{"items", "--list", `"[\"p\", 3, true, [1]]"`, "--result", "", whole}, os.Getenv))
	got, _ = os.ReadFile(whole)
	assert.JSONEq(t, `["p", "3", "true", "[1]"]`, string(got))
}

func TestItemsRefusesWhatIsNotAList(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	for _, list := range []string{`{"a": 1}`, `nope`, `"not json"`} {
		assert.Error(t, run([]string{"items", "--list", list, "--result", "", out}, os.Getenv), list)
	}
	assert.Error(t, run([]string{"items", "--list", `[1]`}, os.Getenv), "no result")
}
