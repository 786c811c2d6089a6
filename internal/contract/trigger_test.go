package contract

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTriggerOf(t *testing.T) {
	fired := TriggerIndicator{Type: TriggerOnChangePipeline, Source: "penguin", SourceNamespace: "team-a"}
	for _, tc := range []struct {
		name, kind  string
		annotations map[string]string
		want        *TriggerIndicator
	}{
		{"a RunSchedule is its own source", "RunSchedule", fired.Annotations(), &TriggerIndicator{Type: "schedule", Source: "nightly", SourceNamespace: "team-b"}},
		{"a Run: what its RunConfiguration recorded, in the Run's own namespace", "Run", fired.Annotations(),
			&TriggerIndicator{Type: TriggerOnChangePipeline, Source: "penguin", SourceNamespace: "team-b"}},
		{"a Run made by hand: all empty, as kfp-operator sends it", "Run", nil, &TriggerIndicator{}},
		{"other kinds: none", "Pipeline", fired.Annotations(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, TriggerOf(tc.kind, "team-b", "nightly", tc.annotations))
		})
	}
}

// The wire form is kfp-operator's: every field present, even empty.
func TestTriggerIndicatorJSON(t *testing.T) {
	b, err := json.Marshal(TriggerIndicator{Type: TriggerSchedule})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"schedule","source":"","sourceNamespace":""}`, string(b))
}
