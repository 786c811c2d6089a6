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

// TestOneOfCarriesAnArtifact: the branch that ran reports its artifact
// (--artifact-result), publishes that, the selector gives it, and the
// consumer's launcher takes it whole (--artifact-json): the executor reads
// the branch's bytes at the branch's URI.
func TestOneOfCarriesAnArtifact(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte("1,2,3"), 0o644))
	spec := executorSpec(t, self, "task", "train", false)
	common := func(task string) []string {
		return []string{"--spec", string(spec), "--param", "a=1", "--output-uri", "file://" + filepath.Join(dir, "run", task),
			"--output-dir", filepath.Join(dir, task, "outputs"), "--pipeline-root", "file://" + dir,
			"--result", "Output=" + filepath.Join(dir, task, "result")}
	}
	reported := filepath.Join(dir, "heads", "kfp-artifact-model")
	require.NoError(t, launch(append(common("heads"), "--artifact", "data=file://"+filepath.Join(dir, "data.csv"),
		"--artifact-result", "model="+reported)))
	heads := filepath.Join(dir, "run", "heads", "oneof", "kfp-artifact-model")
	tails := filepath.Join(dir, "run", "tails", "oneof", "kfp-artifact-model")
	require.NoError(t, run([]string{"oneof", "publish", reported, heads}, os.Getenv))
	selected := filepath.Join(dir, "selected")
	require.NoError(t, run([]string{"oneof", "select", selected, heads, tails}, os.Getenv))
	chosen, err := os.ReadFile(selected)
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri": "file://`+filepath.Join(dir, "run", "heads", "model")+`", "metadata": {"pushed": 1}}`, string(chosen))

	require.NoError(t, launch(append(common("read"), "--artifact-json", "data="+string(chosen))))
	model, err := os.ReadFile(filepath.Join(dir, "run", "read", "model"))
	require.NoError(t, err)
	assert.Equal(t, "model of model of 1,2,3", string(model), "the consumer read the branch's artifact at its URI")

	assert.ErrorContains(t, launch(append(common("bad"), "--artifact-json", "data=file:///x")), `is not an artifact's {uri, metadata}`)
	assert.ErrorContains(t, launch(append(common("bad"), "--artifact-json", `data={"uri": "file:///etc/passwd"}`)), "is not under the pipeline root")
	assert.ErrorContains(t, launch(append(common("bad"), "--artifact-json", "data="+string(chosen),
		"--artifact", "data=file://"+filepath.Join(dir, "data.csv"))), "or given --artifact too")
}
