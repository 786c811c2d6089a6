package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

// placeholderImage is what the demo script replaces with the built image.
const placeholderImage = "kfp-demo:latest"

func compileDemo(t *testing.T) *tektonv1.Pipeline {
	t.Helper()
	data, err := os.ReadFile("pipeline.yaml")
	require.NoError(t, err)
	spec, err := kfpir.Parse(data)
	require.NoError(t, err)
	p, err := kfpir.Compile(spec, kfpir.Options{Name: "demo", Namespace: "ns",
		LauncherImage: "example.com/launcher@sha256:" + strings.Repeat("ab", 32)})
	require.NoError(t, err)
	return p
}

func TestPipelineCompiles(t *testing.T) {
	p := compileDemo(t)
	require.Len(t, p.Spec.Tasks, 3)
	for _, pt := range p.Spec.Tasks {
		for _, s := range pt.TaskSpec.Steps {
			if s.Name == kfpir.MainStep {
				assert.Equal(t, placeholderImage, s.Image, "task %s", pt.Name)
				assert.Equal(t, "/ko-app/kfp-demo", s.Command[0], "ko's path of this command")
			}
		}
	}
}

// The pipeline is the compiler's test IR with only the image changed, so
// what the compiler is tested with is what the demo runs.
func TestPipelineIsTheCompilersTestIR(t *testing.T) {
	ours, err := os.ReadFile("pipeline.yaml")
	require.NoError(t, err)
	theirs, err := os.ReadFile("../../internal/kfpir/testdata/demo.yaml")
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(ours), "image: "+placeholderImage+"\n"))
	assert.Equal(t, string(theirs), strings.ReplaceAll(string(ours), "image: "+placeholderImage, "image: registry.example/kfp-demo:v1"))
}

var variable = regexp.MustCompile(`\$\(([^)]*)\)`)

// substitute replaces Tekton variables with vars, failing on one it lacks:
// an unknown variable would reach the program as literal text.
func substitute(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return variable.ReplaceAllStringFunc(s, func(v string) string {
		name := v[2 : len(v)-1]
		val, ok := vars[name]
		if !ok {
			t.Fatalf("unknown variable %s in %q", v, s)
		}
		return val
	})
}

// TestPipelineRuns runs the compiled Pipeline's steps through run, with the
// variables substituted as Tekton would, in the order runAfter gives: the
// commands and arguments the IR passes are ones this program accepts, and
// the Pipeline's result is the accuracy.
func TestPipelineRuns(t *testing.T) {
	p := compileDemo(t)
	dir := t.TempDir()
	const runName = "demo-run-1"
	pipelineVars := map[string]string{}
	for _, ps := range p.Spec.Params {
		require.NotNil(t, ps.Default, "param %s has a default", ps.Name)
		pipelineVars["params."+ps.Name] = ps.Default.StringVal
	}
	done := map[string]bool{}
	for len(done) < len(p.Spec.Tasks) {
		progress := false
		for _, pt := range p.Spec.Tasks {
			ready := !done[pt.Name]
			for _, after := range pt.RunAfter {
				ready = ready && done[after]
			}
			if !ready {
				continue
			}
			runTask(t, pt, dir, runName, pipelineVars)
			done[pt.Name], progress = true, true
		}
		require.True(t, progress, "runAfter has a cycle")
	}
	require.Len(t, p.Spec.Results, 1)
	acc, err := strconv.ParseFloat(substitute(t, p.Spec.Results[0].Value.StringVal, pipelineVars), 64)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.7)
	model, err := os.ReadFile(filepath.Join(dir, "artifacts", runName, "train", "model"))
	require.NoError(t, err)
	assert.Contains(t, string(model), modelKind, "the model artifact is where the IR says")
}

func runTask(t *testing.T, pt tektonv1.PipelineTask, dir, runName string, pipelineVars map[string]string) {
	t.Helper()
	vars := map[string]string{
		"workspaces.artifacts.path": filepath.Join(dir, "artifacts"),
		"context.pipelineRun.name":  runName,
	}
	for _, ps := range pt.TaskSpec.Params {
		if ps.Default != nil {
			vars["params."+ps.Name] = ps.Default.StringVal
		}
	}
	for _, param := range pt.Params {
		vars["params."+param.Name] = substitute(t, param.Value.StringVal, pipelineVars)
	}
	resultDir := filepath.Join(dir, "results", pt.Name)
	require.NoError(t, os.MkdirAll(resultDir, 0o755))
	for _, r := range pt.TaskSpec.Results {
		vars["results."+r.Name+".path"] = filepath.Join(resultDir, r.Name)
	}
	for _, s := range pt.TaskSpec.Steps {
		var args []string
		for _, a := range slices.Concat(s.Command[1:], s.Args) {
			args = append(args, substitute(t, a, vars))
		}
		switch s.Command[0] {
		case kfpir.LauncherPath: // the prepare step; kfp-task mkdir is tested with kfp-task
			require.Equal(t, "mkdir", args[0])
			require.NoError(t, os.MkdirAll(args[1], 0o777))
			continue
		case "/ko-app/kfp-demo":
		default:
			t.Fatalf("task %s runs %s", pt.Name, s.Command[0])
		}
		env := map[string]string{}
		for _, e := range s.Env {
			env[e.Name] = e.Value
		}
		var out bytes.Buffer
		require.NoError(t, run(args, &out, func(k string) string { return env[k] }), "task %s: kfp-demo %q", pt.Name, args)
		t.Logf("task %s:\n%s", pt.Name, out.String())
	}
	for _, r := range pt.TaskSpec.Results {
		data, err := os.ReadFile(vars["results."+r.Name+".path"])
		require.NoError(t, err, "task %s writes its result %s", pt.Name, r.Name)
		pipelineVars["tasks."+pt.Name+".results."+r.Name] = string(data)
	}
}

func TestConsumerCompilesAndShows(t *testing.T) {
	data, err := os.ReadFile("consumer.yaml")
	require.NoError(t, err)
	spec, err := kfpir.Parse(data)
	require.NoError(t, err)
	p, err := kfpir.Compile(spec, kfpir.Options{Name: "consumer", Namespace: "ns"})
	require.NoError(t, err)
	require.Len(t, p.Spec.Tasks, 1)
	require.Len(t, p.Spec.Params, 1)
	assert.Equal(t, "model_uri", p.Spec.Params[0].Name)
	var out strings.Builder
	require.NoError(t, run([]string{"show", "--name", "model", "--value", "file:///kfp/artifacts/r/train/model"}, &out, os.Getenv))
	assert.Equal(t, "model = file:///kfp/artifacts/r/train/model\n", out.String())
}
