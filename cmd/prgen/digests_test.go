package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// hangingRegistry answers no request until the client gives up (or the test
// ends); reached receives once per request.
func hangingRegistry(t *testing.T) (host string, reached <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 100)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case ch <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs before srv.Close
	return strings.TrimPrefix(srv.URL, "http://"), ch
}

func TestCancelledContextStopsDigestResolution(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	cases := []struct {
		name       string
		cancelWhen string // "before" prgen starts, or once the registry is "reached"
		want       string
	}{
		{"cancelled before resolution", "before", `tools.builder: stopped before resolving "HOST/tools/kaniko:v1": context canceled; nothing was printed`},
		{"cancelled while the registry does not answer", "reached", `tools.builder: stopped while resolving "HOST/tools/kaniko:v1": context canceled; nothing was printed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host, reached := hangingRegistry(t)
			path := matrixWithTools(t, host+"/tools/kaniko:v1", host+"/tools/git:v2")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelWhen == "before" {
				cancel()
			} else {
				go func() {
					<-reached
					cancel()
				}()
			}
			start := time.Now()
			stdout, stderr, err := prgenContext(t, ctx, "-f", path, "--resolve-digests")
			require.Error(t, err)
			assert.ErrorIs(t, err, context.Canceled)
			assert.Less(t, time.Since(start), 10*time.Second, "prgen stops promptly")
			assert.Empty(t, stdout)
			assert.Equal(t, "prgen: "+strings.ReplaceAll(tc.want, "HOST", host)+"\n", stderr)
			if tc.cancelWhen == "before" {
				assert.Empty(t, reached, "no registry is asked once the context is done")
			}
		})
	}
}

// TestSignalStopsDigestResolution runs prgen's main (this test binary, see
// TestMain) and signals it while a registry keeps it waiting.
func TestSignalStopsDigestResolution(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			host, reached := hangingRegistry(t)
			path := matrixWithTools(t, host+"/tools/kaniko:v1", host+"/tools/git:v2")
			cmd := exec.Command(os.Args[0], "-f", path, "--resolve-digests")
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-reached:
			case err := <-exited:
				t.Fatalf("prgen ended before asking the registry: %v: %s", err, stderr.String())
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("prgen never asked the registry")
			}

			require.NoError(t, cmd.Process.Signal(sig))
			start := time.Now()
			select {
			case err := <-exited:
				var exit *exec.ExitError
				require.ErrorAs(t, err, &exit)
				assert.Equal(t, 1, exit.ExitCode(), "an error exit, not death by the signal")
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("prgen did not stop within 10s of " + sig.String())
			}
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Empty(t, stdout.String())
			assert.Equal(t, `prgen: tools.builder: stopped while resolving "`+host+`/tools/kaniko:v1": `+sig.String()+" signal received; nothing was printed\n", stderr.String())
		})
	}
}
