package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

func demoIR(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../internal/kfpir/testdata/demo.yaml")
	require.NoError(t, err)
	return data
}

// writeConfig writes a pipeline config whose framework parameters are
// params (raw JSON values) and returns its path and an output path.
func writeConfig(t *testing.T, version string, params map[string]string) (configPath, outputPath string) {
	t.Helper()
	dir := t.TempDir()
	fw := pipelinesv1beta1.PipelineFramework{Name: "static"}
	if params != nil {
		fw.Parameters = map[string]apiextensionsv1.JSON{}
		for k, v := range params {
			fw.Parameters[k] = apiextensionsv1.JSON{Raw: []byte(v)}
		}
	}
	data, err := json.Marshal(contract.CompileConfig{ContractVersion: version, Name: "demo", Namespace: "team-a",
		Image: "registry.example/demo-pipeline:1", Framework: fw})
	require.NoError(t, err)
	configPath = filepath.Join(dir, "pipeline-config.yaml")
	require.NoError(t, os.WriteFile(configPath, data, 0o644))
	return configPath, filepath.Join(dir, "out", "pipeline.yaml")
}

func quoted(path string) string {
	b, _ := json.Marshal(path)
	return string(b)
}

func TestInjectCopiesItselfAsCompileSh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kfp", "compiler")
	old := syscall.Umask(0o077) // compile.sh is executable by all whatever the umask
	defer syscall.Umask(old)
	require.NoError(t, run([]string{dir}, &bytes.Buffer{}))
	info, err := os.Stat(filepath.Join(dir, "compile.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode())
	got, err := os.ReadFile(filepath.Join(dir, "compile.sh"))
	require.NoError(t, err)
	self, err := os.ReadFile("/proc/self/exe")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(self, got), "compile.sh is this binary (%d bytes, want %d)", len(got), len(self))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "compile.sh"), []byte("stale"), 0o600))
	require.NoError(t, run([]string{dir}, &bytes.Buffer{}), "a second injection replaces the first")
	info, err = os.Stat(filepath.Join(dir, "compile.sh"))
	require.NoError(t, err)
	assert.Equal(t, int64(len(self)), info.Size())
	assert.Equal(t, os.FileMode(0o755), info.Mode())
}

func TestCompilePassesTheIROnUnchanged(t *testing.T) {
	ir := demoIR(t)
	dir := t.TempDir()
	irPath := filepath.Join(dir, "app", "pipeline.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(irPath), 0o755))
	require.NoError(t, os.WriteFile(irPath, ir, 0o644))
	link := filepath.Join(dir, "link.yaml")
	require.NoError(t, os.Symlink(irPath, link))

	for name, path := range map[string]string{"file": irPath, "symbolic link to a file": link} {
		t.Run(name, func(t *testing.T) {
			cfg, out := writeConfig(t, contract.Version, map[string]string{pipelineFileParam: quoted(path)})
			require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
			var log bytes.Buffer
			require.NoError(t, run([]string{"--pipeline_config", cfg, "--output_file", out}, &log))
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(ir, got), "the output is the IR byte for byte")
			assert.Contains(t, log.String(), `KFP pipeline "demo-ml"`)
		})
	}
}

func TestPipelineFile(t *testing.T) {
	for name, tc := range map[string]struct {
		params  map[string]apiextensionsv1.JSON
		want    string
		wantErr string
	}{
		"no parameters":     {nil, "/pipeline.yaml", ""},
		"other parameters":  {map[string]apiextensionsv1.JSON{"components": {Raw: []byte(`"x"`)}}, "/pipeline.yaml", ""},
		"set":               {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`"/app/ir.json"`)}}, "/app/ir.json", ""},
		"a number":          {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`42`)}}, "", "must be a string (a path in the pipeline image), not 42"},
		"an object":         {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`{"path":"/p"}`)}}, "", "must be a string"},
		"null":              {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`null`)}}, "", "must be an absolute path"},
		"relative":          {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`"pipeline.yaml"`)}}, "", `"pipeline.yaml" must be an absolute path`},
		"empty string":      {map[string]apiextensionsv1.JSON{"pipelineFile": {Raw: []byte(`""`)}}, "", "must be an absolute path"},
		"case is respected": {map[string]apiextensionsv1.JSON{"PipelineFile": {Raw: []byte(`"/x"`)}}, "/pipeline.yaml", ""},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := pipelineFile(tc.params)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	subdir := filepath.Join(dir, "subdir")
	require.NoError(t, os.Mkdir(subdir, 0o755))
	dirLink := filepath.Join(dir, "dir-link")
	require.NoError(t, os.Symlink(subdir, dirLink))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	// A valid IR padded past the limit with a YAML comment: only the size
	// is wrong with it.
	big := append(demoIR(t), '#')
	big = append(big, bytes.Repeat([]byte("x"), maxIRBytes-len(big)+1)...)
	_, bigErr := kfpir.Parse(big)
	require.NoError(t, bigErr, "the oversized file is otherwise valid")
	notIR := []byte("apiVersion: v1\nkind: Pod\n")
	_, notIRErr := kfpir.Parse(notIR)
	require.Error(t, notIRErr)

	for name, tc := range map[string]struct {
		version string
		param   string // the pipelineFile parameter, raw JSON; "" = unset
		want    string
	}{
		"missing file":             {contract.Version, quoted(filepath.Join(dir, "none.yaml")), "no such file or directory (the framework parameter pipelineFile names"},
		"directory":                {contract.Version, quoted(subdir), "is not a regular file (it is a directory)"},
		"symbolic link to a dir":   {contract.Version, quoted(dirLink), "dir-link is not a regular file (it is a directory)"},
		"named pipe":               {contract.Version, quoted(fifo), "is not a regular file (it is a named pipe)"},
		"oversized file":           {contract.Version, quoted(file("big.yaml", big)), "is larger than 1048576 bytes (1 MiB)"},
		"empty file":               {contract.Version, quoted(file("empty.yaml", nil)), "kfp IR: empty document"},
		"not KFP IR":               {contract.Version, quoted(file("pod.yaml", notIR)), "is not a compiled KFP pipeline: " + notIRErr.Error()},
		"not YAML":                 {contract.Version, quoted(file("bin", []byte("\x00\x01{["))), "is not a compiled KFP pipeline"},
		"unknown contract version": {"v2", quoted(file("ok.yaml", demoIR(t))), `the pipeline-config has contractVersion "v2", but this compiler understands only contractVersion v1`},
		"no contract version":      {"", quoted(file("ok2.yaml", demoIR(t))), "the pipeline-config has no contractVersion"},
		"parameter not a string":   {contract.Version, `["/pipeline.yaml"]`, "the framework parameter pipelineFile must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			var params map[string]string
			if tc.param != "" {
				params = map[string]string{pipelineFileParam: tc.param}
			}
			cfg, out := writeConfig(t, tc.version, params)
			require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
			err := run([]string{"--pipeline_config", cfg, "--output_file", out}, &bytes.Buffer{})
			assert.ErrorContains(t, err, tc.want)
			assert.NoFileExists(t, out, "nothing is written when a check fails")
		})
	}
}

func TestCommandLine(t *testing.T) {
	cfg, out := writeConfig(t, contract.Version, nil)
	notJSON := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(notJSON, []byte("name: p"), 0o644))
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no arguments":      {nil, "--pipeline_config and --output_file are required"},
		"no output":         {[]string{"--pipeline_config", cfg}, "--pipeline_config and --output_file are required"},
		"unknown flag":      {[]string{"--pipeline-config", cfg, "--output_file", out}, "flag provided but not defined: -pipeline-config"},
		"extra argument":    {[]string{"--pipeline_config", cfg, "--output_file", out, "x"}, `unexpected argument "x"`},
		"config missing":    {[]string{"--pipeline_config", "/nonexistent/config", "--output_file", out}, "reading the pipeline config"},
		"config not JSON":   {[]string{"--pipeline_config", notJSON, "--output_file", out}, "the pipeline config " + notJSON},
		"default IR absent": {[]string{"--pipeline_config", cfg, "--output_file", out}, "/pipeline.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "default IR absent" {
				if _, err := os.Stat(defaultPipelineFile); err == nil {
					t.Skip("this machine has a " + defaultPipelineFile)
				}
			}
			assert.ErrorContains(t, run(tc.args, &bytes.Buffer{}), tc.want)
		})
	}
}

// TestMainExitCodeAndStderr runs the test binary as the command itself, to
// see what the compile step would.
func TestMainExitCodeAndStderr(t *testing.T) {
	if args := os.Getenv("STATIC_COMPILER_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"compile.sh"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	cfg, out := writeConfig(t, "v0", nil)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitCodeAndStderr$")
	cmd.Env = append(os.Environ(), "STATIC_COMPILER_MAIN_ARGS="+strings.Join([]string{"--pipeline_config", cfg, "--output_file", out}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.True(t, errors.As(err, &exitErr), "exits non-zero: %v", err)
	assert.Equal(t, 1, exitErr.ExitCode())
	assert.True(t, strings.HasPrefix(stderr.String(), `static compiler: the pipeline-config has contractVersion "v0"`), stderr.String())
}
