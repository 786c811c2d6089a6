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

	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "kfpir", "testdata", "python_function.yaml"))
	require.NoError(t, err)
	spec, err := kfpir.Parse(data)
	require.NoError(t, err)
	root := t.TempDir()
	p, err := kfpir.Compile(spec, kfpir.Options{Name: "python", LauncherImage: "helper", PipelineRoot: "file://" + root})
	require.NoError(t, err)

	results := t.TempDir()
	step := func(task string, vars map[string]string) (string, error) {
		for _, pt := range p.Spec.Tasks {
			if pt.Name != task {
				continue
			}
			main := pt.TaskSpec.TaskSpec.Steps[1]
			vars["$(context.pipelineRun.name)"] = "run-1"
			vars["$(context.pipelineRun.uid)"] = "uid-1"
			vars["$(context.taskRun.uid)"] = "task-uid-1"
			var args []string
			for _, a := range main.Args {
				for k, v := range vars {
					a = strings.ReplaceAll(a, k, v)
				}
				if strings.Contains(a, "--output-dir") {
					a = strings.ReplaceAll(a, kfpir.LauncherDir, t.TempDir())
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
