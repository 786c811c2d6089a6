package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteCopiesJSONFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"A": `{"kind":"Pipeline"}`, "B": `{"image":"x"}`, "BAD": `{not json`}
	getenv := func(k string) string { return env[k] }

	a, b := filepath.Join(dir, "resource.json"), filepath.Join(dir, "provider", "config.json")
	require.NoError(t, run([]string{"write", "--file", a + "=A", "--file", b + "=B"}, getenv))
	got, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.JSONEq(t, env["B"], string(got))

	err = run([]string{"write", "--file", filepath.Join(dir, "x.json") + "=BAD"}, getenv)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "BAD is not valid JSON")
	err = run([]string{"write", "--file", filepath.Join(dir, "y.json") + "=UNSET"}, getenv)
	require.Error(t, err, "an unset variable is not JSON")
	assert.Error(t, run([]string{"write", "--file", "no-equals"}, getenv))
	assert.Error(t, run([]string{"write"}, getenv))
}

func TestReport(t *testing.T) {
	long := strings.Repeat("é", 3000)
	cases := map[string]struct {
		exitCode string // "" = no exit code file
		output   string // "" = no output file
		id, err  string
	}{
		"success":                 {"0", `{"id":"42"}`, "42", ""},
		"provider error, exit 0":  {"0", `{"id":"","error":"quota exceeded"}`, "", "quota exceeded"},
		"provider error, exit 1":  {"1", `{"error":"no such pipeline"}`, "", "no such pipeline"},
		"crash without output":    {"137", "", "", "provider exited with code 137 without an error message"},
		"exit 0 without output":   {"0", "", "", "provider exited with code 0 but wrote no"},
		"exit 0 with broken JSON": {"0", `{"id":`, "", "provider exited with code 0 but wrote invalid JSON"},
		"unknown exit code":       {"", `{"id":"1"}`, "", "cannot tell how the provider ended"},
		"oversized id":            {"0", `{"id":"` + strings.Repeat("x", 2000) + `"}`, "", "id of 2000 bytes"},
		"id oversized escaped":    {"0", `{"id":"` + strings.Repeat("<", 200) + `"}`, "", "id of 200 bytes (1200 JSON-escaped)"},
		"oversized error":         {"1", `{"error":"` + long + `"}`, "", "…(truncated)"},
		"error of escapes":        {"1", `{"error":"` + strings.Repeat(`<&\"\n`, 1000) + `"}`, "", "…(truncated)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := func(n string) string { return filepath.Join(dir, n) }
			if tc.exitCode != "" {
				require.NoError(t, os.WriteFile(path("exitCode"), []byte(tc.exitCode), 0o644))
			}
			if tc.output != "" {
				require.NoError(t, os.WriteFile(path("output.json"), []byte(tc.output), 0o644))
			}
			runErr := run([]string{"report", "--output", path("output.json"), "--exit-code", path("exitCode"),
				"--id-result", path("id"), "--error-result", path("error"), "--results-budget", "2048"}, os.Getenv)
			if tc.err == "" {
				require.NoError(t, runErr)
			} else {
				require.ErrorIs(t, runErr, errOperationFailed, "a failed operation fails the step, after writing the results")
			}
			id, err := os.ReadFile(path("id"))
			require.NoError(t, err)
			msg, err := os.ReadFile(path("error"))
			require.NoError(t, err)
			assert.Equal(t, tc.id, string(id))
			if tc.err == "" {
				assert.Empty(t, string(msg))
			} else {
				assert.Contains(t, string(msg), tc.err)
			}
			assert.LessOrEqual(t, escapedLen(string(id))+escapedLen(string(msg)), 2048-resultsFraming,
				"results fit the termination message the kubelet keeps, JSON-escaped, with room for Tekton's framing")
			assert.True(t, utf8.Valid(msg), "truncation keeps UTF-8 valid")
		})
	}
}

// The compile pod seals the definition and reports its digest; the
// provider's pod accepts only that definition.
func TestStageSealsAndVerifiesTheDefinition(t *testing.T) {
	dir := t.TempDir()
	compiled := filepath.Join(dir, "compile", "pipeline.yaml")
	sealed := filepath.Join(dir, "workspace", "pipeline.yaml")
	digestFile := filepath.Join(dir, "results", "definition-digest")
	require.NoError(t, os.MkdirAll(filepath.Dir(compiled), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(sealed), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(digestFile), 0o755))
	definition := []byte("pipelineSpec: {}\n")
	require.NoError(t, os.WriteFile(compiled, definition, 0o644))
	// What a tenant step could leave at the destination: a link to a file it wants overwritten.
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("untouched"), 0o644))
	require.NoError(t, os.Symlink(victim, sealed))

	var log strings.Builder
	require.NoError(t, stage([]string{"--from", compiled, "--to", sealed, "--replace", "--digest-result", digestFile}, &log))
	sum := sha256.Sum256(definition)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	got, _ := os.ReadFile(digestFile)
	assert.Equal(t, digest, string(got))
	got, _ = os.ReadFile(victim)
	assert.Equal(t, "untouched", string(got), "the link is replaced, its target never written")
	got, _ = os.ReadFile(sealed)
	assert.Equal(t, definition, got)

	staged := filepath.Join(dir, "kfp", "pipeline.yaml")
	require.NoError(t, stage([]string{"--from", sealed, "--to", staged, "--digest", digest}, &log))
	got, _ = os.ReadFile(staged)
	assert.Equal(t, definition, got)

	other := "sha256:" + strings.Repeat("0", 64)
	err := stage([]string{"--from", sealed, "--to", filepath.Join(dir, "kfp", "other.yaml"), "--digest", other}, &log)
	assert.ErrorContains(t, err, "not the one the compile task sealed")
	assert.NoFileExists(t, filepath.Join(dir, "kfp", "other.yaml"), "a refused definition is not left for the provider")

	for _, bad := range []string{"$(tasks.compile.results.definition-digest)", "sha256:XYZ", "sha256:" + strings.Repeat("A", 64)} {
		assert.ErrorContains(t, stage([]string{"--from", sealed, "--to", filepath.Join(dir, "kfp", "bad.yaml"), "--digest", bad}, &log), "not sha256:")
	}
	for _, unchecked := range [][]string{{"--digest", ""}, {}} {
		args := append([]string{"--from", sealed, "--to", filepath.Join(dir, "kfp", "unchecked.yaml")}, unchecked...)
		assert.ErrorContains(t, stage(args, &log), "no digest", "a copy with no digest to check is refused (%q)", unchecked)
		assert.NoFileExists(t, filepath.Join(dir, "kfp", "unchecked.yaml"))
	}

	// A link a tenant step left at the digest's result path is replaced, never written through.
	require.NoError(t, os.Remove(digestFile))
	require.NoError(t, os.Symlink(victim, digestFile))
	require.NoError(t, stage([]string{"--from", compiled, "--to", sealed, "--replace", "--digest-result", digestFile}, &log))
	got, _ = os.ReadFile(victim)
	assert.Equal(t, "untouched", string(got))
	got, _ = os.ReadFile(digestFile)
	assert.Equal(t, digest, string(got))

	require.NoError(t, os.Remove(sealed))
	require.NoError(t, os.Mkdir(sealed, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sealed, "x"), nil, 0o644))
	assert.ErrorContains(t, stage([]string{"--from", compiled, "--to", sealed, "--replace", "--digest-result", digestFile}, &log), "cannot replace")
}

func TestUnknownCommand(t *testing.T) {
	assert.ErrorContains(t, run([]string{"explode"}, os.Getenv), `unknown command "explode"`)
	assert.Error(t, run(nil, os.Getenv))
}

func TestTruncateEscaped(t *testing.T) {
	for _, s := range []string{strings.Repeat("<", 5000), strings.Repeat("é", 5000), strings.Repeat("a\n\"", 3000), "short", "\xff\xfe" + strings.Repeat("x", 5000)} {
		got := truncateEscaped(s, 1000)
		assert.LessOrEqual(t, escapedLen(got), 1000, "%.20q", s)
		assert.True(t, utf8.ValidString(got))
		if escapedLen(s) <= 1000 {
			assert.Equal(t, s, got, "short strings are kept whole")
		} else {
			assert.True(t, strings.HasSuffix(got, "…(truncated)"))
			assert.Greater(t, escapedLen(got), 900, "the budget is used, not wasted: %d", escapedLen(got))
		}
	}
}

func TestExecSetsThePipelineEnv(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "pipeline-config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"name":"p","env":[{"name":"GREETING","value":"pa$$word $(X)"},{"name":"EMPTY","value":""}]}`), 0o644))
	var gotPath string
	var gotArgs, gotEnv []string
	fake := func(path string, args, env []string) error { gotPath, gotArgs, gotEnv = path, args, env; return nil }
	require.NoError(t, execWithEnv([]string{"--env-from", cfg, "--", "/kfp/compiler/compile.sh", "--output_file", "x"}, []string{"HOME=/home"}, fake))
	assert.Equal(t, "/kfp/compiler/compile.sh", gotPath)
	assert.Equal(t, []string{"/kfp/compiler/compile.sh", "--output_file", "x"}, gotArgs)
	assert.Equal(t, []string{"HOME=/home", "GREETING=pa$$word $(X)", "EMPTY="}, gotEnv, "the env as written, after the step's own")

	assert.ErrorContains(t, execWithEnv([]string{"--env-from", cfg}, nil, fake), "no command")
	assert.Error(t, execWithEnv([]string{"--env-from", "/nonexistent", "--", "x"}, nil, fake))
}

func TestStageCopiesOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "compile", "pipeline.yaml"), filepath.Join(dir, "kfp", "pipeline.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(from), 0o755))
	require.NoError(t, os.WriteFile(from, []byte("definition"), 0o644))
	sum := sha256.Sum256([]byte("definition"))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	var log strings.Builder
	require.NoError(t, stage([]string{"--from", from, "--to", to, "--digest", digest}, &log))
	got, err := os.ReadFile(to)
	require.NoError(t, err)
	assert.Equal(t, "definition", string(got))
	assert.Contains(t, log.String(), "10 bytes, "+digest)
	assert.ErrorContains(t, stage([]string{"--from", from, "--to", to, "--digest", digest}, &log), "exists", "an existing copy is never overwritten")

	secret := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(secret, []byte("token"), 0o600))
	link := filepath.Join(dir, "compile", "link.yaml")
	require.NoError(t, os.Symlink(secret, link))
	assert.ErrorContains(t, stage([]string{"--from", link, "--to", filepath.Join(dir, "kfp", "b"), "--digest", digest}, &log), "symbolic link")
	assert.NoFileExists(t, filepath.Join(dir, "kfp", "b"))

	assert.ErrorContains(t, stage([]string{"--from", filepath.Join(dir, "compile"), "--to", filepath.Join(dir, "kfp", "c"), "--digest", digest}, &log), "not a regular file")
	assert.ErrorContains(t, stage([]string{"--from", filepath.Join(dir, "missing"), "--to", filepath.Join(dir, "kfp", "d"), "--digest", digest}, &log), "no compiled pipeline definition")
	empty := filepath.Join(dir, "compile", "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	assert.ErrorContains(t, stage([]string{"--from", empty, "--to", filepath.Join(dir, "kfp", "e"), "--digest", digest}, &log), "empty")
}
