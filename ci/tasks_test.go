// Package ci holds this project's own release definitions; its tests check
// that the Tasks are valid Tekton, that the release shape passes each Task
// exactly the params it declares, and that the scripts do what they say.
package ci

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
)

func loadTasks(t *testing.T) map[string]*tektonv1.Task {
	t.Helper()
	files, err := filepath.Glob("tasks/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	tasks := map[string]*tektonv1.Task{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		task := &tektonv1.Task{}
		require.NoError(t, yaml.UnmarshalStrict(data, task), f)
		assert.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), task.Name, "file name matches Task name")
		tasks[task.Name] = task
	}
	return tasks
}

func TestTasksPassTektonValidation(t *testing.T) {
	for name, task := range loadTasks(t) {
		task.SetDefaults(context.Background())
		assert.Nil(t, task.Validate(context.Background()), name)
	}
}

func TestScriptsTakeParamsThroughEnvOnly(t *testing.T) {
	for name, task := range loadTasks(t) {
		for _, step := range task.Spec.Steps {
			assert.NotContains(t, step.Script, "$(params.", "%s/%s interpolates a param into its script", name, step.Name)
			if step.Script != "" {
				require.NotNil(t, step.SecurityContext, "%s/%s", name, step.Name)
				assert.True(t, *step.SecurityContext.RunAsNonRoot, "%s/%s runs as non-root", name, step.Name)
				assert.False(t, *step.SecurityContext.AllowPrivilegeEscalation, "%s/%s", name, step.Name)
			}
		}
	}
}

func TestReleaseShapeMatchesTheTasks(t *testing.T) {
	tasks := loadTasks(t)
	shape, err := pipelines.Get(pipelines.Release)
	require.NoError(t, err)
	for _, pt := range shape.Tasks {
		task, ok := tasks[pt.TaskRef.Name]
		require.True(t, ok, "pipeline task %s references Task %s, which ci/tasks lacks", pt.Name, pt.TaskRef.Name)
		declared := map[string]bool{}
		for _, p := range task.Spec.Params {
			declared[p.Name] = true
		}
		passed := map[string]bool{}
		for _, p := range pt.Params {
			passed[p.Name] = true
			assert.True(t, declared[p.Name], "%s passes param %s that Task %s does not declare", pt.Name, p.Name, task.Name)
		}
		for _, p := range task.Spec.Params {
			assert.True(t, p.Default != nil || passed[p.Name], "%s does not pass required param %s of Task %s", pt.Name, p.Name, task.Name)
		}
		taskWorkspaces := map[string]bool{}
		for _, w := range task.Spec.Workspaces {
			taskWorkspaces[w.Name] = true
		}
		for _, w := range pt.Workspaces {
			assert.True(t, taskWorkspaces[w.Name], "%s binds workspace %s that Task %s does not declare", pt.Name, w.Name, task.Name)
		}
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// The update-manifests script, run with sh against a local repository: it
// pins every whole reference to the image, leaves look-alikes alone, pushes
// one commit, and a second run changes nothing.
func TestUpdateManifestsScriptPinsTheImage(t *testing.T) {
	task := loadTasks(t)["update-manifests"]
	require.Len(t, task.Spec.Steps, 1)

	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", remote)
	seed := filepath.Join(root, "seed")
	git(t, root, "clone", "-q", remote, seed)
	require.NoError(t, os.MkdirAll(filepath.Join(seed, "config", "manager"), 0o755))
	manifest := `containers:
  - image: ghcr.io/org/operator:v1
  - image: "ghcr.io/org/operator@sha256:` + strings.Repeat("0", 64) + `"
  - image: ghcr.io/org/operator
  - image: ghcr.io/org/operator-helper:v1
  - image: ghcr.io/org/operator/sub:v1
`
	require.NoError(t, os.WriteFile(filepath.Join(seed, "config", "manager", "manager.yaml"), []byte(manifest), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(seed, "README"), []byte("ghcr.io/org/operator:v1\n"), 0o644))
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-q", "-m", "seed")
	git(t, seed, "push", "-q", "origin", "main")

	digest := "sha256:" + strings.Repeat("ab", 32)
	result := filepath.Join(root, "commit")
	work := filepath.Join(root, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	script := strings.ReplaceAll(task.Spec.Steps[0].Script, "$(results.COMMIT.path)", result)
	script = strings.ReplaceAll(script, "/work/", work+"/")
	runScript := func() string {
		require.NoError(t, os.RemoveAll(filepath.Join(work, "repo")))
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(os.Environ(),
			"APP=operator", "VERSION=main", "MANIFESTS_URL="+remote, "MANIFESTS_BRANCH=main",
			"MANIFESTS_PATH=config", "IMAGE_URL=ghcr.io/org/operator:main", "IMAGE_DIGEST="+digest,
			"CREDENTIALS_BOUND=false", "CREDENTIALS_DIR=", "HOME="+filepath.Join(work, ".home"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		commit, err := os.ReadFile(result)
		require.NoError(t, err)
		return string(commit)
	}

	commit := runScript()
	check := filepath.Join(root, "check")
	git(t, root, "clone", "-q", remote, check)
	assert.Equal(t, git(t, check, "rev-parse", "HEAD"), commit, "the COMMIT result names the pushed commit")
	got, err := os.ReadFile(filepath.Join(check, "config", "manager", "manager.yaml"))
	require.NoError(t, err)
	pinned := "ghcr.io/org/operator@" + digest
	assert.Equal(t, `containers:
  - image: `+pinned+`
  - image: "`+pinned+`"
  - image: `+pinned+`
  - image: ghcr.io/org/operator-helper:v1
  - image: ghcr.io/org/operator/sub:v1
`, string(got))
	readme, err := os.ReadFile(filepath.Join(check, "README"))
	require.NoError(t, err)
	assert.Equal(t, "ghcr.io/org/operator:v1\n", string(readme), "files outside manifests-path are untouched")
	assert.Contains(t, git(t, check, "log", "-1", "--format=%s"), "Pin operator main to "+pinned)

	assert.Empty(t, runScript(), "a branch already pinned gets no commit")
	git(t, check, "pull", "-q")
	assert.Equal(t, commit, git(t, check, "rev-parse", "HEAD"))
}
