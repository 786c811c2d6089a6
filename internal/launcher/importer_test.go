package launcher

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImporterMetadata(t *testing.T) {
	values := map[string]string{"metadata": "model-a", "metadata-2": `img "q"`, "metadata-3": "1"}
	for _, tc := range []struct{ template, want, err string }{
		{template: `{"name":["{{$.inputs.parameters['metadata']}}","alias"]}`, want: `{"name":["model-a","alias"]}`},
		{template: `{"containerSpec":{"imageUri":"{{$.inputs.parameters['metadata-2']}}"}}`, want: `{"containerSpec":{"imageUri":"img \"q\""}}`},
		{template: `{"n":"prefix-{{$.inputs.parameters['metadata']}}","k":["{{$.inputs.parameters['metadata-3']}}"]}`, want: `{"k":["1"],"n":"prefix-model-a"}`},
		{template: `{"{{$.inputs.parameters['metadata']}}":"{{$.inputs.parameters['metadata']}}","x":2}`, want: `{"model-a":"model-a","x":2}`},
		{template: `{"a":"{{$.inputs.parameters['nope']}}"}`, err: `input parameter "nope" has no value`},
		{template: `{"a":"{{$.pipeline_job_name}}"}`, err: "is not an input parameter's"},
		{template: `{"a":"{{$.inputs.artifacts['x'].uri}}"}`, err: "is not an input parameter's"},
	} {
		got, err := ImporterMetadata(json.RawMessage(tc.template), values)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.template)
			continue
		}
		require.NoError(t, err, tc.template)
		assert.JSONEq(t, tc.want, string(got), tc.template)
	}
}

func TestMetadataParams(t *testing.T) {
	got, err := MetadataParams(map[string]string{"data:metadata": "a", "data:metadata-2": "b", "other:metadata": "c"})
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"data": {"metadata": "a", "metadata-2": "b"}, "other": {"metadata": "c"}}, got)
	_, err = MetadataParams(map[string]string{"data": "a"})
	assert.ErrorContains(t, err, "is not ARTIFACT:PARAM=VALUE")
}

func TestMetadataInputs(t *testing.T) {
	got, err := MetadataInputs(json.RawMessage(`{"{{$.inputs.parameters['b']}}":["{{$.inputs.parameters[\"a\"]}}-{{$.inputs.parameters['b']}}"],"n":1}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got)
	_, err = MetadataInputs(json.RawMessage(`{"a":"{{$.pipeline_root}}"}`))
	assert.ErrorContains(t, err, "is not an input parameter's")
}
