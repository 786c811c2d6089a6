package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// prgen runs the command as a user would and returns stdout and stderr.
func prgen(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return prgenContext(t, context.Background(), args...)
}

// prgenContext runs the command with ctx (main's is cancelled by SIGINT and SIGTERM).
func prgenContext(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := execute(ctx, args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestGoldenOutput(t *testing.T) {
	cases := map[string][]string{
		"all.yaml":              {"-f", "testdata/releases.yaml"},
		"one.yaml":              {"-f", "testdata/releases.yaml", "--selector", "app=profile-controller,version=master"},
		"set-based.yaml":        {"-f", "testdata/releases.yaml", "-l", "app in (notebook-controller),version notin (master)", "-n", "other"},
		"all.json":              {"-f", "testdata/releases.yaml", "-o", "json"},
		"ci-releases.yaml":      {"-f", "../../ci/releases.yaml"},
		"ci-operator-main.yaml": {"-f", "../../ci/releases.yaml", "-l", "app=operator,version=main"},
	}
	for golden, args := range cases {
		t.Run(golden, func(t *testing.T) {
			out, stderr, err := prgen(t, args...)
			require.NoError(t, err, stderr)
			path := filepath.Join("testdata", "golden", golden)
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./cmd/prgen -update to create it")
			assert.Equal(t, string(want), out, "output changed; if intended, go test ./cmd/prgen -update")

			again, _, err := prgen(t, args...)
			require.NoError(t, err)
			assert.Equal(t, out, again, "output is deterministic")
		})
	}
}

// decodeRuns reads a YAML stream or JSON List of PipelineRuns.
func decodeRuns(t *testing.T, out string) []*tektonv1.PipelineRun {
	t.Helper()
	var runs []*tektonv1.PipelineRun
	if strings.HasPrefix(out, "{") {
		var list struct{ Items []*tektonv1.PipelineRun }
		require.NoError(t, yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096).Decode(&list))
		return list.Items
	}
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		pr := &tektonv1.PipelineRun{}
		if err := dec.Decode(pr); err != nil {
			break
		}
		if pr.Kind != "" {
			runs = append(runs, pr)
		}
	}
	return runs
}

func TestYAMLAndJSONCarryTheSameRuns(t *testing.T) {
	asYAML, _, err := prgen(t, "-f", "testdata/releases.yaml")
	require.NoError(t, err)
	asJSON, _, err := prgen(t, "-f", "testdata/releases.yaml", "-o", "json")
	require.NoError(t, err)
	fromYAML, fromJSON := decodeRuns(t, asYAML), decodeRuns(t, asJSON)
	require.Len(t, fromYAML, 4)
	assert.Equal(t, fromJSON, fromYAML)
}

func TestEveryRunPassesTektonValidation(t *testing.T) {
	for _, format := range []string{"yaml", "json"} {
		out, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "-o", format)
		require.NoError(t, err, stderr)
		runs := decodeRuns(t, out)
		require.Len(t, runs, 4, format)
		for _, pr := range runs {
			assert.NoError(t, generator.Validate(context.Background(), pr), "%s %s", format, pr.GenerateName)
			assert.Equal(t, "run", pr.Labels["type"])
			assert.Equal(t, pr.Labels["app"]+"-"+pr.Labels["version"]+"-", pr.GenerateName)
		}
	}
}

func TestSelection(t *testing.T) {
	cases := map[string][]string{
		"app=profile-controller":                  {"profile-controller/master", "profile-controller/v0.7"},
		"version=v0.7":                            {"profile-controller/v0.7", "notebook-controller/v0.7"},
		"version!=v0.7,app=notebook-controller":   {"notebook-controller/master"},
		"app notin (profile-controller)":          {"notebook-controller/master", "notebook-controller/v0.7"},
		"type=run,app in (a,notebook-controller)": {"notebook-controller/master", "notebook-controller/v0.7"},
		"": {"profile-controller/master", "profile-controller/v0.7", "notebook-controller/master", "notebook-controller/v0.7"},
	}
	for selector, want := range cases {
		out, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "--selector", selector)
		require.NoError(t, err, stderr)
		var got []string
		for _, pr := range decodeRuns(t, out) {
			got = append(got, pr.Labels["app"]+"/"+pr.Labels["version"])
		}
		assert.Equal(t, want, got, "selector %q", selector)
	}
}

func TestErrorsPrintPositionAndNothingOnStdout(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(content string) string {
		n++
		path := filepath.Join(dir, fmt.Sprintf("matrix%d.yaml", n))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	valid, err := os.ReadFile("testdata/releases.yaml")
	require.NoError(t, err)
	matrix := string(valid)

	cases := map[string]struct {
		args []string
		want []string
	}{
		"unknown field": {[]string{"-f", write(strings.Replace(matrix, "    manifests: apps/profiles", "    manifest: apps/profiles", 1))},
			[]string{"matrix1.yaml:15: applications[0].manifest: unknown field", "matrix1.yaml:11: applications[0].manifests: is required"}},
		"missing field": {[]string{"-f", write(strings.Replace(matrix, "    revision: v0.7-branch\n", "", 1))},
			[]string{"matrix2.yaml:26: versions[1].revision: is required"}},
		"duplicate application": {[]string{"-f", write(strings.Replace(matrix, "name: notebook-controller", "name: profile-controller", 1))},
			[]string{`matrix3.yaml:16: applications[1].name: duplicate application "profile-controller" (first at line 11)`}},
		"selector matches nothing": {[]string{"-f", "testdata/releases.yaml", "-l", "app=nope"},
			[]string{`selector "app=nope" matches no (application, version) pair in testdata/releases.yaml`}},
		"bad selector syntax": {[]string{"-f", "testdata/releases.yaml", "--selector", "app in (a"},
			[]string{`--selector "app in (a"`}},
		"missing file": {[]string{"-f", filepath.Join(dir, "absent.yaml")}, []string{"absent.yaml: no such file"}},
		"bad output":   {[]string{"-f", "testdata/releases.yaml", "-o", "xml"}, []string{`--output "xml": must be yaml, json or name`}},
		"no file flag": {[]string{}, []string{`"filename" not set`}},
		"unknown flag": {[]string{"-f", "testdata/releases.yaml", "--selectr", "app=a"}, []string{"prgen: unknown flag: --selectr"}},
		"both selector flags": {[]string{"-f", "testdata/releases.yaml", "-l", "app=a", "--select", "app=b"},
			[]string{"--select is the deprecated name of --selector: give only --selector"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := prgen(t, tc.args...)
			require.Error(t, err)
			assert.Empty(t, stdout, "nothing may reach kubectl on error")
			for _, want := range tc.want {
				assert.Contains(t, stderr, want, "errors are printed on stderr")
			}
		})
	}
}

func TestHelpDocumentsFlagsAndExamples(t *testing.T) {
	out, _, err := prgen(t, "--help")
	require.NoError(t, err)
	for _, want := range []string{"-l, --selector", "-o, --output", "yaml|json|name", "APP/VERSION", "kubectl create -f - -o name",
		"--namespace", "--resolve-digests", "--filename", "kubectl create -f -", "notin", "manifestsBranch", "SIGINT"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "--select string", "the deprecated flag is not listed among the flags")
}

func TestDeprecatedSelectStillSelectsAndWarnsOnStderrOnly(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"--select", []string{"--select", "app=profile-controller,version=master"}},
		{"--select=", []string{"--select=app=profile-controller,version=master"}},
		{"--select with -o json", []string{"--select", "app=profile-controller,version=master", "-o", "json"}},
		{"--select with -o name", []string{"--select", "app=profile-controller,version=master", "-o", "name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-f", "testdata/releases.yaml"}, tc.args...)
			out, stderr, err := prgen(t, args...)
			require.NoError(t, err, stderr)

			withSelector := append([]string{"-f", "testdata/releases.yaml"}, tc.args...)
			for i, a := range withSelector {
				withSelector[i] = strings.Replace(a, "--select", "--selector", 1)
			}
			want, newStderr, err := prgen(t, withSelector...)
			require.NoError(t, err)
			assert.Equal(t, want, out, "--select selects what --selector does")
			assert.Empty(t, newStderr, "--selector warns about nothing")

			assert.Equal(t, "Flag --select has been deprecated, use --selector (-l) instead\n", stderr)
			assert.NotContains(t, out, "deprecated", "stdout is for kubectl")
		})
	}
}

func TestOutputName(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "profile-controller/master\nprofile-controller/v0.7\nnotebook-controller/master\nnotebook-controller/v0.7\n"},
		{[]string{"-l", "version=v0.7"}, "profile-controller/v0.7\nnotebook-controller/v0.7\n"},
		{[]string{"-l", "app=notebook-controller,version=master", "-n", "other"}, "notebook-controller/master\n"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, err := prgen(t, append([]string{"-f", "testdata/releases.yaml", "-o", "name"}, tc.args...)...)
			require.NoError(t, err, stderr)
			assert.Equal(t, tc.want, out)

			// Each line is the identity of one run -o yaml prints, in the same order.
			asYAML, _, err := prgen(t, append([]string{"-f", "testdata/releases.yaml"}, tc.args...)...)
			require.NoError(t, err)
			var fromYAML []string
			for _, pr := range decodeRuns(t, asYAML) {
				fromYAML = append(fromYAML, pr.Labels["app"]+"/"+pr.Labels["version"])
			}
			assert.Equal(t, strings.Fields(tc.want), fromYAML)
		})
	}

	// -o name still refuses a broken matrix with nothing on stdout.
	out, stderr, err := prgen(t, "-f", "testdata/releases.yaml", "-o", "name", "-l", "app=nope")
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "matches no (application, version) pair")
}
