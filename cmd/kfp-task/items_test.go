package main

import (
	"encoding/json"
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

// TestItemsOfANestedLoopArePairs: a loop over a field of an outer loop's
// item runs once per (outer item, inner item) pair; every array is
// aligned with the pairs, an outer item repeated for each of its inner
// items, and an outer item with an empty list gives no pair.
func TestItemsOfANestedLoopArePairs(t *testing.T) {
	dir := t.TempDir()
	inner, outer, b := filepath.Join(dir, "inner"), filepath.Join(dir, "outer"), filepath.Join(dir, "b")
	list := `[{"p": [{"q": "1"}, {"q": "2"}], "b": "hello"}, {"p": [], "b": "none"}, {"p": "[{\"q\": \"11\"}]", "b": "halo"}]`
	require.NoError(t, run([]string{"items", "--list", list, "--nest", `parseJson(string_value)["p"]`,
		"--result", `parseJson(string_value)["q"]`, inner, "--outer-result", "", outer,
		"--outer-result", `parseJson(string_value)["b"]`, b}, os.Getenv))
	got, _ := os.ReadFile(inner)
	assert.JSONEq(t, `["1", "2", "11"]`, string(got))
	got, _ = os.ReadFile(b)
	assert.JSONEq(t, `["hello", "hello", "halo"]`, string(got))
	got, _ = os.ReadFile(outer)
	var outers []string
	require.NoError(t, json.Unmarshal(got, &outers))
	require.Len(t, outers, 3)
	assert.JSONEq(t, `{"p": [{"q": "1"}, {"q": "2"}], "b": "hello"}`, outers[1])

	// A list of lists, nested by the whole item.
	require.NoError(t, run([]string{"items", "--list", `[[1, 2], [3]]`, "--nest", "", "--result", "", inner}, os.Getenv))
	got, _ = os.ReadFile(inner)
	assert.JSONEq(t, `["1", "2", "3"]`, string(got))

	assert.Error(t, run([]string{"items", "--list", `[{"p": 1}]`, "--nest", `parseJson(string_value)["p"]`, "--result", "", inner}, os.Getenv), "not a list")
	assert.Error(t, run([]string{"items", "--list", `[1]`, "--outer-result", "", inner}, os.Getenv), "no --nest")
}
