package runcompletion

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       EventData // only the fields checked
		err        string
	}{
		{name: "names as strings (kfp-operator's wire form)",
			body: `{"status":"succeeded","pipelineName":"team/p","runName":"team/r","runId":"id-1","provider":"team/kfp"}`,
			want: EventData{Status: Succeeded, PipelineName: NamespacedName{"team", "p"}, RunName: &NamespacedName{"team", "r"}, RunID: "id-1", Provider: NamespacedName{"team", "kfp"}}},
		{name: "names as objects, provider's namespace from the resource",
			body: `{"status":"failed","pipelineName":{"name":"p"},"runConfigurationName":{"namespace":"team","name":"rc"},"runId":"id-1","provider":{"name":"kfp"}}`,
			want: EventData{Status: Failed, PipelineName: NamespacedName{"team", "p"}, RunConfigurationName: &NamespacedName{"team", "rc"}, RunID: "id-1", Provider: NamespacedName{"team", "kfp"}}},
		{name: "a structured CloudEvent carrying it",
			body: `{"specversion":"1.0","type":"org.kubeflow.pipelines.run-completion","id":"x","source":"s","data":{"status":"succeeded","runName":"team/r","runId":"id-1","provider":"team/kfp"}}`,
			want: EventData{Status: Succeeded, RunName: &NamespacedName{"team", "r"}, RunID: "id-1", Provider: NamespacedName{"team", "kfp"}}},
		{name: "another CloudEvent type", body: `{"specversion":"1.0","type":"x","data":{}}`, err: `CloudEvent type "x"`},
		{name: "not JSON", body: `{`, err: "not JSON"},
		{name: "status", body: `{"status":"Succeeded","runName":"team/r","runId":"i","provider":"team/kfp"}`, err: `status "Succeeded"`},
		{name: "no resource", body: `{"status":"failed","runId":"i","provider":"team/kfp"}`, err: "names no resource"},
		{name: "no run id", body: `{"status":"failed","runName":"team/r","provider":"team/kfp"}`, err: "runId must have 1 to 512 bytes"},
		{name: "run without namespace", body: `{"status":"failed","runName":"r","runId":"i","provider":"kfp"}`, err: `runName "r" has no namespace`},
		{name: "two namespaces", body: `{"status":"failed","runName":"a/r","runConfigurationName":"b/rc","runId":"i","provider":"a/kfp"}`, err: "different namespaces"},
		{name: "no provider", body: `{"status":"failed","runName":"a/r","runId":"i"}`, err: "provider is empty"},
		{name: "bad name", body: `{"status":"failed","runName":"a/R_1","runId":"i","provider":"a/kfp"}`, err: `runName: name "R_1"`},
		{name: "three parts", body: `{"status":"failed","runName":"a/b/c","runId":"i","provider":"a/kfp"}`, err: "want namespace/name"},
		{name: "a number for a name", body: `{"status":"failed","runName":7,"runId":"i","provider":"a/kfp"}`, err: "namespace/name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.body))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEncodedNamesAreKfpOperatorsStrings(t *testing.T) {
	out, err := json.Marshal(EventData{Status: Succeeded, PipelineName: NamespacedName{"team", "p"}, RunName: &NamespacedName{"team", "r"},
		RunID: "id", Provider: NamespacedName{"team", "kfp"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"status":"succeeded","pipelineName":"team/p","runName":"team/r","runId":"id",
		"servingModelArtifacts":null,"pipelineComponents":null,"provider":"team/kfp"}`, string(out))
}

func TestComponentsRoundTrip(t *testing.T) {
	ev, err := Decode([]byte(`{"status":"succeeded","runName":"a/r","runId":"i","provider":"a/kfp","pipelineComponents":[
		{"name":"train","componentArtifacts":[{"name":"model","artifacts":[{"uri":"gs://m","metadata":{"pushed":1}}]}]}]}`))
	require.NoError(t, err)
	c := ev.Components()
	require.Len(t, c, 1)
	assert.Equal(t, "gs://m", c[0].Outputs[0].Artifacts[0].URI)
	assert.Equal(t, 1.0, c[0].Outputs[0].Artifacts[0].Metadata["pushed"])
	assert.Equal(t, ev.PipelineComponents, FromComponents(c))
}

// FuzzDecode: whatever is posted, Decode either refuses it or returns an
// event naming a resource and a provider, which encodes and decodes again
// to itself.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"status":"succeeded","pipelineName":"team/p","runName":"team/r","runId":"id-1","provider":"team/kfp"}`,
		`{"status":"failed","runConfigurationName":{"namespace":"team","name":"rc"},"runId":"x","provider":{"name":"kfp"}}`,
		`{"specversion":"1.0","type":"org.kubeflow.pipelines.run-completion","data":{"status":"failed"}}`,
		`{"status":"failed","runName":"a/b/c"}`, `null`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Decode(body)
		if err != nil {
			return
		}
		if ev.RunName == nil && ev.RunConfigurationName == nil || ev.Provider.Namespace == "" || ev.RunID == "" {
			t.Fatalf("accepted an event naming no resource or provider: %+v", ev)
		}
		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
		if back.RunID != ev.RunID || back.Provider != ev.Provider || back.Status != ev.Status {
			t.Fatalf("round trip changed %+v into %+v", ev, back)
		}
	})
}
