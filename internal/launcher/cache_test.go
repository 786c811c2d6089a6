package launcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheFingerprintIsOfTheComponentAndItsInputs(t *testing.T) {
	spec := addSpec()
	fp := func(spec Spec, image string, rt Runtime, digests map[string]string) string {
		ei, err := ExecutorInput(spec, rt)
		require.NoError(t, err)
		f, err := Fingerprint(spec, image, ei, digests)
		require.NoError(t, err)
		return f
	}
	base := fp(spec, "img:1", addRuntime(), nil)
	assert.Len(t, base, 64)
	assert.Equal(t, base, fp(spec, "img:1", addRuntime(), nil), "stable")

	other := addRuntime()
	other.JobName, other.TaskUID, other.OutputURI = "another-run", "another-task", "file:///elsewhere"
	assert.Equal(t, base, fp(spec, "img:1", other, nil), "the run, the task and where outputs go are not part of it")
	renamed := spec
	renamed.Task = "renamed"
	assert.Equal(t, base, fp(renamed, "img:1", addRuntime(), nil), "nor the task's name")

	changed := addRuntime()
	changed.Parameters = map[string]string{"a": "2.5", "n": "3"}
	assert.NotEqual(t, base, fp(spec, "img:1", changed, nil), "an input value")
	assert.NotEqual(t, base, fp(spec, "img:2", addRuntime(), nil), "the image")
	args := spec
	args.Args = append(append([]string{}, spec.Args...), "--verbose")
	assert.NotEqual(t, base, fp(args, "img:1", addRuntime(), nil), "the arguments")
	assert.NotEqual(t, base, fp(spec, "img:1", addRuntime(), map[string]string{"data": "sha256:1"}), "an input artifact's content")
}
