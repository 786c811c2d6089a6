package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// TestMain runs the fixture itself when the tests start their own binary
// as the provider.
func TestMain(m *testing.M) {
	if os.Getenv("FIXTURE_PROVIDER_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// provide runs the fixture on the documents and returns its output and exit code.
func provide(t *testing.T, resource contract.Resource, config contract.ProviderConfig) (map[string]string, int) {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, v any) string {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	out := filepath.Join(dir, "output.json")
	cmd := exec.Command(os.Args[0], "pipeline", "create", "--provider-config", write("config.json", config),
		"--resource", write("resource.json", resource), "--output", out)
	cmd.Env = append(os.Environ(), "FIXTURE_PROVIDER_MAIN=1")
	log, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	data, err := os.ReadFile(out)
	require.NoError(t, err, "no output; log: %s", log)
	var answer map[string]string
	require.NoError(t, json.Unmarshal(data, &answer))
	return answer, code
}

func documents() (contract.Resource, contract.ProviderConfig) {
	return contract.Resource{ContractVersion: contract.Version, Kind: "Pipeline",
			Metadata: contract.Metadata{Name: "p", Namespace: "team-a", UID: "u"}, Spec: json.RawMessage(`{}`)},
		contract.ProviderConfig{ContractVersion: contract.Version, Name: "fixture", Namespace: "team-a",
			Spec: pipelinesv1beta1.ProviderSpec{Image: "provider", ServiceAccount: "sa"}}
}

func TestAnswersWithAStableID(t *testing.T) {
	resource, config := documents()
	out, code := provide(t, resource, config)
	assert.Equal(t, map[string]string{"id": "pipeline/team-a/p"}, out)
	assert.Equal(t, 0, code)

	resource.Status.Provider.ID = "known"
	out, _ = provide(t, resource, config)
	assert.Equal(t, map[string]string{"id": "known"}, out, "the id the resource already has")
}

func TestBehavesAsTheParametersSay(t *testing.T) {
	resource, config := documents()
	config.Spec.Parameters = map[string]apiextensionsv1.JSON{"fixture": {Raw: []byte(`{"Pipeline/p": {"error": "quota exceeded", "exitCode": 1}}`)}}
	out, code := provide(t, resource, config)
	assert.Equal(t, map[string]string{"error": "quota exceeded"}, out)
	assert.Equal(t, 1, code)
}

func TestRefusesAnUnknownContractVersion(t *testing.T) {
	resource, config := documents()
	resource.ContractVersion = "v2"
	out, code := provide(t, resource, config)
	assert.Equal(t, 0, code, "a reported error")
	assert.Contains(t, out["error"], `the resource has contractVersion "v2", but this provider understands only contractVersion v1`)
	assert.Empty(t, out["id"])

	resource, config = documents()
	config.ContractVersion = ""
	out, _ = provide(t, resource, config)
	assert.Contains(t, out["error"], "the provider-config has no contractVersion")
}
