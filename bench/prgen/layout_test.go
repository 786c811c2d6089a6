package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen/release"
)

func runsOf(t *testing.T, apps, versions int) ([]*release.Run, []byte) {
	t.Helper()
	m, err := release.Parse("bench.yaml", matrix(apps, versions))
	require.NoError(t, err)
	runs, err := m.Runs(context.Background(), release.Options{})
	require.NoError(t, err)
	var printed bytes.Buffer
	require.NoError(t, release.Write(&printed, runs, "yaml"))
	return runs, printed.Bytes()
}

func TestOverlaysReplaceOnlyWhatDiffers(t *testing.T) {
	runs, _ := runsOf(t, 2, 2)
	files, err := kustomizeLayout(runs)
	require.NoError(t, err)
	assert.Len(t, files, 2+4+1)
	assert.Equal(t, "resources: [../../base]\nnameSuffix: \"-app-0-v0.0\"\n", string(files["overlays/app-0-v0.0/kustomization.yaml"]))
	overlay := string(files["overlays/app-1-v0.1/kustomization.yaml"])
	assert.Contains(t, overlay, `"app": "app-1"`)
	assert.Contains(t, overlay, `"tekton.dev/pipeline": "app-1-v0.1"`)
	assert.Contains(t, overlay, `{op: replace, path: /spec/params/4/value, value: "components/app-1"}`)
	assert.NotContains(t, overlay, "manifests.git", "the manifests repository is the same for all")
	assert.Contains(t, string(files["base/pipelinerun.yaml"]), "\n  name: release\n")
}

func TestEquivalentFindsADifference(t *testing.T) {
	_, printed := runsOf(t, 2, 2)
	n, err := equivalent(printed, printed)
	require.NoError(t, err)
	assert.Equal(t, 4, n)

	changed := bytes.Replace(printed, []byte("value: components/app-1\n"), []byte("value: components/app-9\n"), 1)
	_, err = equivalent(printed, changed)
	assert.ErrorContains(t, err, "spec.params[4].value (prgen components/app-1, kustomize components/app-9)")

	dropped := printed[:bytes.LastIndex(printed, []byte("---\n"))]
	_, err = equivalent(printed, dropped)
	assert.ErrorContains(t, err, "prgen printed 4 runs, kustomize 3")
}

// TestKustomizeBuildsWhatPrgenPrints runs kubectl kustomize on a small
// layout, as the benchmark does at 1,000 runs.
func TestKustomizeBuildsWhatPrgenPrints(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	runs, printed := runsOf(t, 2, 3)
	files, err := kustomizeLayout(runs)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, writeFiles(dir, files))
	built, _, err := command(kubectl, "kustomize", dir)
	require.NoError(t, err)
	assert.Equal(t, 6, strings.Count(string(built), "kind: PipelineRun"))
	n, err := equivalent(printed, built)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
}
