package kfpir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneOfArtifacts: each branch's producer runs under the launcher,
// reports its artifact's {uri, metadata} as a result and publishes it; the
// selector gives the one published, which the consumer (launched) takes
// whole and the pipeline's output artifact gives as a Pipeline result.
func TestOneOfArtifacts(t *testing.T) {
	p := compileValid(t, load(t, "oneof_artifacts.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	sel, ok := tasks["condition-branches-1-oneof-1"]
	require.True(t, ok, "the selector task, in %v", names(p.Spec.Tasks))
	assert.Equal(t, []string{"write", "write-2"}, sel.RunAfter)
	require.Len(t, sel.When, 1, "guarded by the dsl.If around the group")
	assert.Equal(t, []string{"oneof", "select", "$(results.value.path)",
		"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/write/oneof/kfp-artifact-data",
		"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/write-2/oneof/kfp-artifact-data"}, sel.TaskSpec.Steps[0].Args)
	for _, branch := range []string{"write", "write-2"} {
		steps := tasks[branch].TaskSpec.Steps
		require.Len(t, steps, 3, "prepare, main (launched), publish")
		assert.Contains(t, steps[1].Args, "data=$(results.kfp-artifact-data.path)", "the launcher reports the artifact")
		assert.Equal(t, PublishStep, steps[2].Name)
		assert.Equal(t, []string{"oneof", "publish", "$(results.kfp-artifact-data.path)",
			"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/" + branch + "/oneof/kfp-artifact-data"}, steps[2].Args)
	}
	read := tasks["read"]
	require.Len(t, read.Params, 1)
	assert.Equal(t, "kfp-artifact-data", read.Params[0].Name)
	assert.Equal(t, "$(tasks.condition-branches-1-oneof-1.results.value)", read.Params[0].Value.StringVal)
	main := read.TaskSpec.Steps[len(read.TaskSpec.Steps)-1]
	assert.Equal(t, MainStep, main.Name)
	assert.Contains(t, main.Args, "--artifact-json")
	assert.Contains(t, main.Args, "data=$(params.kfp-artifact-data)")
	assert.NotContains(t, main.Args, "--artifact", "no URI known when compiling")

	require.Len(t, p.Spec.Results, 1)
	assert.Equal(t, "Output", p.Spec.Results[0].Name)
	assert.Equal(t, "$(tasks.condition-branches-1-oneof-1.results.value)", p.Spec.Results[0].Value.StringVal)
}

// TestOneOfArtifactRefusals: what cannot publish stays refused by name.
func TestOneOfArtifactRefusals(t *testing.T) {
	_, err := Compile(load(t, "oneof_artifacts.yaml"), s3Options())
	var ue *UnsupportedError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, "output from dsl.OneOf with an object-store pipeline root", ue.Feature)

	data, err := os.ReadFile(filepath.Join("testdata", "oneof_artifacts.yaml"))
	require.NoError(t, err)
	text := strings.NewReplacer(
		"outputArtifactKey: data,", "outputArtifactKey: oneof,",
		"artifacts:\n        data:\n          artifactType: {schemaTitle: system.Dataset, schemaVersion: 0.0.1}\n  comp-read:",
		"artifacts:\n        oneof:\n          artifactType: {schemaTitle: system.Dataset, schemaVersion: 0.0.1}\n  comp-read:",
		"{{$.outputs.artifacts[''data''].path}}", "{{$.outputs.artifacts[''oneof''].path}}").Replace(string(data))
	require.NotEqual(t, string(data), text)
	spec, err := Parse([]byte(text))
	require.NoError(t, err)
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, "output artifact named oneof on a branch of a dsl.OneOf", ue.Feature)
	assert.Equal(t, "condition-0/condition-branches-1/condition-2/write", ue.Task)
}
