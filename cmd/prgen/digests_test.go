package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
)

// A registry on 127.0.0.1 serving tools/kaniko:v1 and tools/git:v2;
// returns the registry host and the two digests.
func toolRegistry(t *testing.T) (host, kaniko, git string) {
	t.Helper()
	reg := registry.Start(t)
	_, kaniko = reg.Push("tools/kaniko:v1")
	_, git = reg.Push("tools/git:v2")
	return reg.Host, kaniko, git
}

func matrixWithTools(t *testing.T, builder, git string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/releases.yaml")
	require.NoError(t, err)
	m := strings.Replace(string(data), "registry.example.com/tools/kaniko:v1", builder, 1)
	m = strings.Replace(m, "registry.example.com/tools/git:v2", git, 1)
	path := filepath.Join(t.TempDir(), "releases.yaml")
	require.NoError(t, os.WriteFile(path, []byte(m), 0o644))
	return path
}

func TestResolveDigestsPinsToolImages(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of the machine's
	host, kaniko, git := toolRegistry(t)
	path := matrixWithTools(t, host+"/tools/kaniko:v1", host+"/tools/git:v2")

	out, stderr, err := prgen(t, "-f", path, "--resolve-digests")
	require.NoError(t, err, stderr)
	runs := decodeRuns(t, out)
	require.Len(t, runs, 4)
	for _, pr := range runs {
		params := map[string]string{}
		for _, p := range pr.Spec.Params {
			params[p.Name] = p.Value.StringVal
		}
		assert.Equal(t, host+"/tools/kaniko:v1@"+kaniko, params["builder-image"])
		assert.Equal(t, host+"/tools/git:v2@"+git, params["git-image"])
	}

	plain, _, err := prgen(t, "-f", path)
	require.NoError(t, err)
	assert.NotContains(t, plain, "@sha256:", "without the flag images stay as written")
}

func TestResolveDigestsReportsAMissingTag(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host, _, _ := toolRegistry(t)
	path := matrixWithTools(t, host+"/tools/kaniko:v9", host+"/tools/git:v2")

	stdout, stderr, err := prgen(t, "-f", path, "--resolve-digests")
	require.Error(t, err)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `tools.builder: image "`+host+`/tools/kaniko:v9": v9 not found in `+host+`/tools/kaniko`)
}
