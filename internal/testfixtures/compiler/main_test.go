package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func compileConfig(t *testing.T, cfg contract.CompileConfig) (configPath, outputPath string) {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	configPath = filepath.Join(dir, "pipeline-config.yaml")
	require.NoError(t, os.WriteFile(configPath, data, 0o644))
	return configPath, filepath.Join(dir, "pipeline.yaml")
}

func TestCompiles(t *testing.T) {
	t.Setenv("PIPELINE_MODE", "fast")
	cfgPath, out := compileConfig(t, contract.CompileConfig{ContractVersion: contract.Version, Name: "p", Namespace: "team-a",
		Image: "pipeline:1", Framework: pipelinesv1beta1.PipelineFramework{Name: "fixture"}})
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	require.NoError(t, compile([]string{"--pipeline_config", cfgPath, "--output_file", out}))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var def map[string]any
	require.NoError(t, json.Unmarshal(data, &def))
	assert.IsType(t, []any{}, def["sees"], "what the compiler sees of the provider's files is listed")
	delete(def, "sees") // depends on the machine running the test
	delete(def, "apiServer")
	assert.Equal(t, "", def["planted"], "no definition workspace here, so nothing planted")
	delete(def, "planted")
	got, _ := json.Marshal(def)
	assert.JSONEq(t, `{"pipeline": "p", "image": "pipeline:1", "env": ["PIPELINE_MODE=fast"]}`, string(got))
}

func TestFailsWhenTheParametersSay(t *testing.T) {
	cfgPath, out := compileConfig(t, contract.CompileConfig{ContractVersion: contract.Version, Name: "p",
		Framework: pipelinesv1beta1.PipelineFramework{Name: "fixture", Parameters: map[string]apiextensionsv1.JSON{"fixture-fail": {Raw: []byte(`"no"`)}}}})
	assert.EqualError(t, compile([]string{"--pipeline_config", cfgPath, "--output_file", out}), `compilation failed: "no"`)
}

func TestRefusesAnUnknownContractVersion(t *testing.T) {
	cfgPath, out := compileConfig(t, contract.CompileConfig{ContractVersion: "v2", Name: "p"})
	err := compile([]string{"--pipeline_config", cfgPath, "--output_file", out})
	assert.ErrorContains(t, err, `the pipeline-config has contractVersion "v2", but this compiler understands only contractVersion v1`)
	assert.NoFileExists(t, out)
}
