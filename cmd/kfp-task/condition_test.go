package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConditionWritesTheOutcome(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(`["a","b"]`), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--condition", "int(inputs.parameter_values['n']) > 3", "--param", "n", "NUMBER_INTEGER", "5"}, "true"},
		{[]string{"--condition", "!(inputs.parameter_values['c'] == 'heads') && inputs.parameter_values['c'] == 'tails'", "--param", "c", "STRING", "heads"}, "false"},
		{[]string{"--condition", "inputs.parameter_values['c'] == \"it's\"", "--param", "c", "STRING", "it's"}, "true"},
		{[]string{"--condition", "inputs.parameter_values['l'] == ['a', 'b']", "--param-file", "l", "LIST", filepath.Join(dir, "list")}, "true"},
	} {
		out := filepath.Join(dir, "outcome")
		require.NoError(t, run(append(append([]string{"condition"}, tc.args...), "--result", out), os.Getenv))
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(got), tc.args)
	}
}

func TestConditionFailsOnBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "outcome")
	for _, args := range [][]string{
		{"--condition", "int(inputs.parameter_values['n']) > 3", "--param", "n", "NUMBER_INTEGER", "five"},
		{"--condition", "inputs.parameter_values['missing'] == 'x'"},
		{"--condition", "inputs.parameter_values['n'] ==", "--param", "n", "STRING", "x"},
		{"--param", "n", "STRING"},
		{"--condition", "inputs.parameter_values['n'] == 'x'", "--param-file", "n", "STRING", filepath.Join(filepath.Dir(out), "missing")},
	} {
		assert.Error(t, run(append(append([]string{"condition"}, args...), "--result", out), os.Getenv), args)
		assert.NoFileExists(t, out)
	}
}
