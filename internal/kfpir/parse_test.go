package kfpir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestParseForms(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "demo.yaml"))
	require.NoError(t, err)
	asJSON, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	job, err := json.Marshal(map[string]any{"displayName": "demo", "pipelineSpec": json.RawMessage(asJSON), "runtimeConfig": map[string]any{}})
	require.NoError(t, err)
	platform := append(append([]byte{}, data...), []byte("---\nplatforms:\n  kubernetes:\n    deploymentSpec:\n      executors:\n        exec-train:\n          securityContext:\n            runAsUser: 0\n")...)

	fromYAML, err := Parse(data)
	require.NoError(t, err)
	cases := []struct {
		name  string
		input []byte
		check func(t *testing.T, s *PipelineSpec)
	}{
		{"YAML", data, func(t *testing.T, s *PipelineSpec) {
			assert.Equal(t, "demo-ml", s.PipelineInfo.Name)
			assert.Equal(t, "2.1.0", s.SchemaVersion)
			assert.Equal(t, "kfp-2.13.0", s.SDKVersion)
			assert.Len(t, s.Root.DAG.Tasks, 3)
			assert.Equal(t, 2, s.Root.DAG.Tasks["evaluate"].RetryPolicy.MaxRetryCount)
			assert.Equal(t, "generate", s.Root.DAG.Tasks["train"].Inputs.Parameters["rows"].TaskOutputParameter.ProducerTask)
			assert.Equal(t, "256Mi", s.DeploymentSpec.Executors["exec-train"].Container.Resources.ResourceMemoryLimit)
		}},
		{"JSON", asJSON, func(t *testing.T, s *PipelineSpec) { assert.Equal(t, fromYAML, s) }},
		{"PipelineJob wrapper", job, func(t *testing.T, s *PipelineSpec) {
			assert.Equal(t, fromYAML.Root, s.Root)
			_, err := Compile(s, Options{Name: "x", LauncherImage: launcherImage})
			assert.NoError(t, err, "an empty runtimeConfig is fine")
		}},
		{"platform spec document", platform, func(t *testing.T, s *PipelineSpec) {
			assert.NotEmpty(t, s.PlatformSpec)
			_, err := Compile(s, Options{Name: "x", LauncherImage: launcherImage})
			var ue *UnsupportedError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.Contains(t, ue.Feature, "kfp-kubernetes setting")
			assert.Contains(t, ue.Feature, "securityContext")
			assert.Equal(t, "train", ue.Task)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.input)
			require.NoError(t, err)
			tc.check(t, s)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"schema 1", "schemaVersion: 1.0.0\nroot: {dag: {tasks: {}}}\n", `schemaVersion "1.0.0" is not supported`},
		{"schema 20", "schemaVersion: 20.1.0\nroot: {dag: {tasks: {}}}\n", `schemaVersion "20.1.0" is not supported`},
		{"no schema", "pipelineInfo: {name: x}\nroot: {dag: {tasks: {}}}\n", "schemaVersion is missing"},
		{"KFP v1 Argo workflow", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n", "schemaVersion is missing"},
		{"empty", "# nothing\n", "empty document"},
		{"not an object", "- a\n- b\n", "not an object"},
		{"not YAML", "a: [b\n", "not YAML or JSON"},
		{"three documents", "schemaVersion: 2.1.0\n---\na: 1\n---\nb: 2\n", "3 YAML documents"},
		{"no root", "schemaVersion: 2.1.0\npipelineInfo: {name: x}\n", "root is missing"},
		{"unknown top-level field", "schemaVersion: 2.1.0\nroot: {dag: {tasks: {}}}\nsurprise: 1\n", `unknown field "surprise"`},
		{"unknown task field names the task", "schemaVersion: 2.1.0\nroot:\n  dag:\n    tasks:\n      train:\n        taskInfo: {name: train}\n        componentRef: {name: c}\n        newFeature: {}\n",
			`task "train": json: unknown field "newFeature"`},
		{"unknown container field", "schemaVersion: 2.1.0\nroot: {dag: {tasks: {}}}\ndeploymentSpec: {executors: {e: {container: {image: x, volumeMounts: []}}}}\n", `unknown field "volumeMounts"`},
		{"PipelineJob with unknown field", `{"pipelineSpec": {"schemaVersion": "2.1.0"}, "serviceAccount": "x"}`, `PipelineJob field "serviceAccount"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
