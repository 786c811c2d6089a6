package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode()
}

func TestMkdirCreatesWorldWritableDirectories(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o700))
	old := syscall.Umask(0o022) // the usual umask would leave 0755
	defer syscall.Umask(old)

	dir := filepath.Join(base, "artifacts", "run-1", "train")
	require.NoError(t, run([]string{"mkdir", dir}, os.Getenv))
	for _, d := range []string{filepath.Join(base, "artifacts"), filepath.Join(base, "artifacts", "run-1"), dir} {
		assert.Equal(t, os.ModeDir|0o777, mode(t, d), "%s, created, is writable by any user", d)
	}
	assert.Equal(t, os.ModeDir|0o700, mode(t, base), "a directory that existed is left as it was")

	// Again, and a sibling beside it: the existing parents are accepted.
	require.NoError(t, os.Chmod(dir, 0o750))
	sibling := filepath.Join(base, "artifacts", "run-1", "evaluate")
	require.NoError(t, run([]string{"mkdir", dir, sibling + "/"}, os.Getenv))
	assert.Equal(t, os.ModeDir|0o750, mode(t, dir), "an existing directory is not changed")
	assert.Equal(t, os.ModeDir|0o777, mode(t, sibling))
}

func TestMkdirFollowsALinkToADirectory(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "volume")
	require.NoError(t, os.Mkdir(target, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(base, "artifacts")))
	require.NoError(t, run([]string{"mkdir", filepath.Join(base, "artifacts", "run", "task")}, os.Getenv))
	assert.DirExists(t, filepath.Join(target, "run", "task"))
}

func TestMkdirRefuses(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	dangling := filepath.Join(base, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(base, "nowhere"), dangling))

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no directory":             {nil, "mkdir: no directory given"},
		"relative path":            {[]string{"artifacts/run"}, `mkdir: "artifacts/run" is not an absolute path`},
		"dot-relative path":        {[]string{"./x"}, "not an absolute path"},
		"empty path":               {[]string{""}, `"" is not an absolute path`},
		"a file":                   {[]string{file}, file + " exists and is not a directory"},
		"under a file":             {[]string{filepath.Join(file, "run", "task")}, file + " exists and is not a directory"},
		"a dangling symbolic link": {[]string{dangling}, dangling + " exists and is not a directory"},
		"name too long":            {[]string{filepath.Join(base, strings.Repeat("x", 300))}, "file name too long"},
		"second of two fails":      {[]string{filepath.Join(base, "ok"), "rel"}, `"rel" is not an absolute path`},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(append([]string{"mkdir"}, tc.args...), os.Getenv)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.NoDirExists(t, filepath.Join(base, "ok"), "paths are checked before any is created")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(data), "the file is left alone")
}

func TestMkdirWithoutPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anywhere")
	}
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o555))
	t.Cleanup(func() { assert.NoError(t, os.Chmod(base, 0o755)) }) // so that TempDir can remove it
	err := run([]string{"mkdir", filepath.Join(base, "run", "task")}, os.Getenv)
	assert.ErrorContains(t, err, "permission denied")
}
