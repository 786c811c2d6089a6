package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

// TestTheSDKsCommandRunsThroughTheLauncher compiles Python function
// components exactly as the KFP SDK writes them (kfpir's testdata), then
// runs each task's main step as Tekton would, with Tekton's variables
// substituted: the launcher (kfp-task launch) builds the executor input,
// runs the SDK's sh command in this fixture, and writes the results.
func TestTheSDKsCommandRunsThroughTheLauncher(t *testing.T) {
	bin := binaries(t)

	step := launcherSteps(t, bin, filepath.Join(testenv.RepoRoot(), "internal", "kfpir", "testdata", "python_function.yaml"))
	results := t.TempDir()

	out, err := step("add", map[string]string{"$(params.a)": "2.5", "$(results.Output.path)": filepath.Join(results, "add")})
	require.NoError(t, err, out)
	sum, err := os.ReadFile(filepath.Join(results, "add"))
	require.NoError(t, err)
	assert.Equal(t, "3.5", string(sum), "a given, b its default 1.0, through the SDK's own command")

	out, err = step("report", map[string]string{"$(params.total)": string(sum), "$(results.Output.path)": filepath.Join(results, "report")})
	require.NoError(t, err, out)
	text, err := os.ReadFile(filepath.Join(results, "report"))
	require.NoError(t, err)
	assert.Equal(t, "total=3.5 note=None", string(text), "the optional note absent from the executor input, as in KFP")

	// A Dataset under a file:// root: the SDK gives its artifacts a path
	// only for gs://, minio:// and s3:// URIs, so the component fails, as
	// it would with KFP's own executor.
	out, err = step("save", map[string]string{"$(params.total)": string(sum)})
	require.Error(t, err)
	assert.Contains(t, out, "has no path: the SDK maps only gs://, minio:// and s3:// URIs")

	out, err = step("echo", map[string]string{"$(params.word)": "y"})
	require.Error(t, err, "echo is no command of this fixture's PATH")
	assert.Contains(t, out, `running echo`, "the launcher got as far as running the resolved command")
}

// TestTheE2EPipelineRunsThroughTheLauncher runs the e2e suite's pipeline
// (pipeline.yaml) here first, task by task.
func TestTheE2EPipelineRunsThroughTheLauncher(t *testing.T) {
	step := launcherSteps(t, binaries(t), "pipeline.yaml")
	results := t.TempDir()
	out, err := step("add", map[string]string{"$(params.a)": "2.25", "$(results.Output.path)": filepath.Join(results, "add")})
	require.NoError(t, err, out)
	out, err = step("report", map[string]string{"$(params.total)": "3.25", "$(results.Output.path)": filepath.Join(results, "report")})
	require.NoError(t, err, out)
	out, err = step("greet", map[string]string{"$(params.who)": "y", "$(results.greeting.path)": filepath.Join(results, "greeting")})
	require.NoError(t, err, out)
	for file, want := range map[string]string{"add": "3.25", "report": "total=3.25 note=None", "greeting": "hello y"} {
		got, err := os.ReadFile(filepath.Join(results, file))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), file)
	}
}

// binaries builds kfp-task and this fixture (as sh and python3) into a
// directory, which becomes the whole PATH.
func binaries(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	build := func(pkg, out string) {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, out), pkg)
		cmd.Dir = testenv.RepoRoot()
		output, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", output)
	}
	build("./cmd/kfp-task", "kfp-task")
	build("./internal/testfixtures/kfpexecutor", "sh")
	require.NoError(t, os.Link(filepath.Join(bin, "sh"), filepath.Join(bin, "python3")))
	t.Setenv("PATH", bin)
	return bin
}

// launcherSteps compiles the IR in file and returns what runs a task's
// main step as Tekton would: its arguments with Tekton's variables
// substituted (vars, plus the run's context), kfp-task run on them.
func launcherSteps(t *testing.T, bin, file string) func(task string, vars map[string]string) (string, error) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	spec, err := kfpir.Parse(data)
	require.NoError(t, err)
	p, err := kfpir.Compile(spec, kfpir.Options{Name: "python", LauncherImage: "helper", PipelineRoot: "file://" + t.TempDir()})
	require.NoError(t, err)
	return func(task string, vars map[string]string) (string, error) {
		for _, pt := range p.Spec.Tasks {
			if pt.Name != task {
				continue
			}
			main := pt.TaskSpec.Steps[1]
			require.Equal(t, kfpir.LauncherDir+"/kfp-task", main.Command[0])
			vars["$(context.pipelineRun.name)"] = "run-1"
			vars["$(context.pipelineRun.uid)"] = "uid-1"
			vars["$(context.taskRun.uid)"] = "task-uid-1"
			var args []string
			for _, a := range main.Args {
				for k, v := range vars {
					a = strings.ReplaceAll(a, k, v)
				}
				args = append(args, a)
			}
			for i, a := range args {
				if a == "--output-dir" {
					args[i+1] = filepath.Join(t.TempDir(), "outputs")
				}
			}
			out, err := exec.Command(filepath.Join(bin, "kfp-task"), args...).CombinedOutput()
			return string(out), err
		}
		t.Fatalf("no task %s", task)
		return "", nil
	}
}
