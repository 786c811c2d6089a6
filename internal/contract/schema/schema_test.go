package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// schemaDir is tasks/schema, from this package's directory.
const schemaDir = "../../../tasks/schema"

func TestCommittedSchemasAreGenerated(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(Documents), "tasks/schema holds one schema per document: run make manifests")
	for _, doc := range Documents {
		want, err := Generate(doc.Type)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(schemaDir, doc.File))
		require.NoError(t, err, "run make manifests")
		assert.Equal(t, string(want), string(got), "tasks/schema/%s is stale: run make manifests", doc.File)
	}
}

// compile compiles the committed schema of a document.
func compile(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(schemaDir, file))
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource(file, doc))
	s, err := c.Compile(file)
	require.NoError(t, err, "%s is not a valid draft 2020-12 schema", file)
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return s.Validate(inst)
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

func jsonValue(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// examples are documents as the operator builds them, every field set.
func examples(t *testing.T) map[string][][]byte {
	spec := pipelinesv1beta1.PipelineSpec{
		Provider: "team-a/kfp", Image: "ghcr.io/org/pipeline:1.0",
		Env:       []pipelinesv1beta1.NamedValue{{Name: "PIPELINE_MODE", Value: "full"}},
		Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx", Parameters: map[string]apiextensionsv1.JSON{"beamArgs": jsonValue(`["--runner=Direct"]`)}},
	}
	resource := contract.Resource{
		ContractVersion: contract.Version, APIVersion: pipelinesv1beta1.GroupVersion.String(), Kind: "Pipeline",
		Metadata: contract.Metadata{Name: "train", Namespace: "team-a", UID: "4f0c2b8e-0d7e-4d8a-9d0e-1b2c3d4e5f60", Generation: 3},
		Spec:     marshal(t, spec),
		Status:   contract.ResourceStatus{Provider: pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "pipeline-7d1f"}},
		Version:  "1.0-3f2a9c1e0b",
	}
	firstCreate := resource
	firstCreate.Kind, firstCreate.Spec, firstCreate.Status = "Experiment", []byte(`{"provider":"kfp","description":"nightly"}`), contract.ResourceStatus{}

	digest := "@sha256:" + strings.Repeat("ab", 32)
	config := contract.ProviderConfig{
		ContractVersion: contract.Version, Name: "kfp", Namespace: "team-a",
		Spec: pipelinesv1beta1.ProviderSpec{
			Image: "ghcr.io/org/provider-kfp:1.0" + digest, ExecutionMode: pipelinesv1beta1.ExecutionModeV2,
			ServiceAccount:      "kfp-runner",
			DefaultBeamArgs:     []pipelinesv1beta1.NamedValue{{Name: "project", Value: "ml-prod"}},
			PipelineRootStorage: "gs://ml-prod/pipelines",
			Parameters: map[string]apiextensionsv1.JSON{
				"endpoint": jsonValue(`"http://ml-pipeline.kubeflow:8888"`), "retries": jsonValue(`3`), "fixture": jsonValue(`{"*":{"sleep":"1s"}}`),
			},
			Frameworks:        []pipelinesv1beta1.Framework{{Name: "tfx", Image: "ghcr.io/org/compiler-tfx:1.0" + digest}},
			AllowedNamespaces: []string{"team-b", "*"},
			ArtifactRepository: &pipelinesv1beta1.ArtifactRepository{S3: &pipelinesv1beta1.S3ArtifactRepository{
				Bucket: "artifacts", Endpoint: "minio.minio:9000", Region: "eu-west-1", Insecure: true, KeyPrefix: "runs", KeyFormat: "{{workflow.name}}",
				AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "minio"}, Key: "accesskey"},
				SecretKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "minio"}, Key: "secretkey", Optional: new(bool)},
			}},
		},
		ArtifactRepository: &contract.ArtifactLocation{
			Source: "namespace", Location: "s3://artifacts/runs", Endpoint: "minio.minio:9000", Region: "eu-west-1", Insecure: true,
			Secrets: []contract.SecretKeyRef{{Purpose: "accessKey", Name: "minio", Key: "accesskey"}, {Purpose: "secretKey", Name: "minio", Key: "secretkey"}},
			Ref:     &contract.ConfigMapKeyRef{Name: "artifact-repositories", Key: "default"},
		},
	}
	gcs := config
	gcs.Spec.ArtifactRepository = &pipelinesv1beta1.ArtifactRepository{GCS: &pipelinesv1beta1.GCSArtifactRepository{
		Bucket: "ml-prod", KeyPrefix: "runs", ServiceAccountKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gcs"}, Key: "key.json"},
	}}
	gcs.ArtifactRepository = nil
	minimal := contract.ProviderConfig{ContractVersion: contract.Version, Name: "kfp", Namespace: "team-a",
		Spec: pipelinesv1beta1.ProviderSpec{Image: "ghcr.io/org/provider-kfp:1.0" + digest, ServiceAccount: "kfp-runner"}}

	compile := contract.CompileConfig{
		ContractVersion: contract.Version, Name: "train", Namespace: "team-a", Image: spec.Image, Env: spec.Env,
		Framework: spec.Framework, BeamArgs: config.Spec.DefaultBeamArgs, PipelineRoot: "s3://artifacts/runs",
	}
	return map[string][][]byte{
		"resource.schema.json":        {marshal(t, resource), marshal(t, firstCreate)},
		"provider-config.schema.json": {marshal(t, config), marshal(t, gcs), marshal(t, minimal)},
		"compile-config.schema.json":  {marshal(t, compile), marshal(t, contract.CompileConfig{ContractVersion: contract.Version, Name: "p", Namespace: "n", Image: "i", Framework: pipelinesv1beta1.PipelineFramework{Name: "kfpsdk"}})},
		"output.schema.json": {
			marshal(t, contract.Output{ID: "pipeline-7d1f"}), marshal(t, contract.Output{Error: "quota exceeded"}),
			[]byte(`{"id": "x", "error": ""}`), []byte(`{}`),
		},
	}
}

func TestDocumentsValidate(t *testing.T) {
	all := examples(t)
	require.Len(t, all, len(Documents))
	for _, doc := range Documents {
		s := compile(t, doc.File)
		for _, data := range all[doc.File] {
			assert.NoError(t, validate(t, s, data), "%s: %s", doc.File, data)
		}
	}
}

// TestSchemasRefuse checks that the schemas are not vacuous: each change
// here breaks the contract.
func TestSchemasRefuse(t *testing.T) {
	all := examples(t)
	cases := []struct {
		file, why string
		edit      func(map[string]any)
	}{
		{"resource.schema.json", "a contract version the schema is not of", func(m map[string]any) { m["contractVersion"] = "v2" }},
		{"resource.schema.json", "no contract version", func(m map[string]any) { delete(m, "contractVersion") }},
		{"resource.schema.json", "no uid", func(m map[string]any) { delete(m["metadata"].(map[string]any), "uid") }},
		{"resource.schema.json", "a generation that is not an integer", func(m map[string]any) { m["metadata"].(map[string]any)["generation"] = "3" }},
		{"resource.schema.json", "a status that is not an object", func(m map[string]any) { m["status"] = "synced" }},
		{"provider-config.schema.json", "a spec.image that is not a string", func(m map[string]any) { m["spec"].(map[string]any)["image"] = 42 }},
		{"provider-config.schema.json", "a serviceURL that is not a string", func(m map[string]any) { m["serviceURL"] = []any{} }},
		{"provider-config.schema.json", "an unknown execution mode", func(m map[string]any) { m["spec"].(map[string]any)["executionMode"] = "v3" }},
		{"provider-config.schema.json", "a secret without a key", func(m map[string]any) {
			delete(m["artifactRepository"].(map[string]any)["secrets"].([]any)[0].(map[string]any), "key")
		}},
		{"provider-config.schema.json", "a contract version the schema is not of", func(m map[string]any) { m["contractVersion"] = "v0" }},
		{"compile-config.schema.json", "env that is not a list", func(m map[string]any) { m["env"] = map[string]any{"A": "b"} }},
		{"compile-config.schema.json", "no framework", func(m map[string]any) { delete(m, "framework") }},
		{"output.schema.json", "an id that is not a string", func(m map[string]any) { m["id"] = 42 }},
	}
	for _, c := range cases {
		var m map[string]any
		require.NoError(t, json.Unmarshal(all[c.file][0], &m))
		c.edit(m)
		assert.Error(t, validate(t, compile(t, c.file), marshal(t, m)), "%s must refuse %s", c.file, c.why)
	}

	// Fields added within a version are not refused (objects stay open).
	var m map[string]any
	require.NoError(t, json.Unmarshal(all["resource.schema.json"][0], &m))
	m["addedLater"] = true
	m["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	assert.NoError(t, validate(t, compile(t, "resource.schema.json"), marshal(t, m)))
}

// TestREADMEExamplesValidate checks the example documents in
// tasks/README.md: each ```json block after a line
// `<!-- example of tasks/schema/FILE -->` must validate against FILE.
func TestREADMEExamplesValidate(t *testing.T) {
	readme, err := os.ReadFile("../../../tasks/README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)<!-- example of schema/([a-z-]+\\.schema\\.json) -->\\s*```json\n(.*?)```").FindAllSubmatch(readme, -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		file := string(b[1])
		seen[file] = true
		assert.NoError(t, validate(t, compile(t, file), b[2]), "the README's example of %s", file)
	}
	for _, doc := range Documents {
		assert.True(t, seen[doc.File], "tasks/README.md shows no example of %s", doc.File)
	}
}

type embedded struct {
	Inner string `json:"inner"`
}

type sample struct {
	embedded
	Plain    string          `json:"plain"`
	Optional string          `json:"optional,omitempty"`
	Zero     int             `json:"zero,omitzero"`
	Struct   embedded        `json:"struct,omitempty"` // omitempty never leaves out a struct
	List     []string        `json:"list"`             // nil is null
	Map      map[string]uint `json:"map,omitempty"`
	Pointer  *embedded       `json:"pointer"` // nil is null
	Any      json.RawMessage `json:"any"`
	Untagged bool
	Skipped  string            `json:"-"`
	Bytes    []byte            `json:"bytes,omitempty"`
	Nested   map[string][]bool `json:"nested,omitempty"`
}

func TestGenerateFollowsEncodingJSON(t *testing.T) {
	data, err := Generate(reflect.TypeFor[sample]())
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got))
	props := got["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"inner", "plain", "optional", "zero", "struct", "list", "map", "pointer", "any", "Untagged", "bytes", "nested"}, keys)
	assert.Equal(t, []any{"inner", "plain", "struct", "list", "pointer", "any", "Untagged"}, got["required"])
	assert.Equal(t, []any{"array", "null"}, props["list"].(map[string]any)["type"])
	assert.Equal(t, map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/embedded"}, map[string]any{"type": "null"}}}, props["pointer"])
	assert.Equal(t, map[string]any{}, props["any"])
	assert.Equal(t, map[string]any{"type": "integer", "minimum": float64(0)}, props["map"].(map[string]any)["additionalProperties"])
	assert.Equal(t, "byte", props["bytes"].(map[string]any)["format"])

	// Every value encoding/json writes for the type validates.
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("sample.json", doc))
	s, err := c.Compile("sample.json")
	require.NoError(t, err)
	for _, v := range []sample{{}, {Any: json.RawMessage(`[1]`), List: []string{"a"}, Map: map[string]uint{"a": 1}, Pointer: &embedded{}, Bytes: []byte("x"), Nested: map[string][]bool{"a": {true}}}} {
		assert.NoError(t, validate(t, s, marshal(t, v)))
	}
}

type selfEncoding struct{}

func (selfEncoding) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

func TestGenerateRefusesWhatItCannotDescribe(t *testing.T) {
	_, err := Generate(reflect.TypeFor[struct {
		C selfEncoding `json:"c"`
	}]())
	assert.ErrorContains(t, err, "encodes itself to JSON")
	_, err = Generate(reflect.TypeFor[struct {
		N int `json:"n,string"`
	}]())
	assert.ErrorContains(t, err, ",string")
	_, err = Generate(reflect.TypeFor[struct {
		M map[int]string `json:"m"`
	}]())
	assert.ErrorContains(t, err, "string keys")
}

func TestDescriptionDropsMarkers(t *testing.T) {
	assert.Equal(t, "Name of the thing, on one line.\n\nSecond paragraph.",
		description("Name of the thing,\non one line.\n+optional\n+kubebuilder:validation:MaxLength=3\n\nSecond paragraph.\nTODO: later.\n"))
}

func TestEnumValuesAreUnquoted(t *testing.T) {
	g := &generator{}
	assert.Equal(t, []string{"v1", "v2", ""}, g.enum("Mode.\n+kubebuilder:validation:Enum=v1;v2;\"\"\n"), `"" is the empty string, as controller-gen reads it`)
	assert.Equal(t, []string{"json", "merge"}, g.enum("+kubebuilder:validation:Enum=json;merge"))
	assert.Nil(t, g.enum("+optional"))
}

// A Provider's pod settings (spec.podTemplate*, marked +contract:omit) are
// the operator's business: the provider's schema does not describe them,
// and the operator leaves them out of the document (lifecycle's pinnedSpec).
func TestProviderPodSettingsAreNotInTheContract(t *testing.T) {
	assert.True(t, omittedField("Env.\n+optional\n+contract:omit\n"))
	assert.False(t, omittedField("Env, not +contract:omit.\n+optional\n"))
	data, err := Generate(reflect.TypeFor[contract.ProviderConfig]())
	require.NoError(t, err)
	var doc struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	spec, ok := doc.Defs["ProviderSpec"]
	require.True(t, ok, "ProviderSpec is a definition of the provider-config schema")
	for _, field := range []string{"podTemplateEnv", "podTemplateVolumes", "podTemplateVolumeMounts"} {
		assert.NotContains(t, spec.Properties, field)
	}
	assert.Contains(t, spec.Properties, "serviceImage", "the other fields stay")
	assert.Equal(t, []string{"v1", "v2", ""}, spec.Properties["executionMode"].Enum)
}
