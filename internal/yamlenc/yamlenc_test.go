package yamlenc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	goyaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Strings a careless emitter writes plain and a reader then takes for
// something else (or fails to parse).
var trickyStrings = []string{
	"", " ", " lead", "trail ", "yes", "No", "ON", "off", "y", "N", "true", "False", "null", "Null", "~",
	"1", "0.3.1", "1e3", "0x1F", "0o17", "1_000", "12:30", "-1", "+1", ".5", ".inf", "-.Inf", ".NaN",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "a: b", "a:b", "a #b", "a#b", "#x", "- x", "-x", "? x",
	"@x", "`x", "*x", "&x", "!x", "|", ">", "%x", "'", "\"", "'q'", "\"q\"", "[a]", "{a: b}", "a, b",
	"line\nbreak", "tab\there", "back\\slash", "uni ☃ code", "\x00nul", "\u2028sep", "$(params.x)",
	"$(tasks.a.results.b)", "ghcr.io/org/app:v1@sha256:" + strings.Repeat("a", 64), "https://x.y/z?q=1&r=2",
	"key:", "::", "a  b", "=", "<<", "---", "...", "a\r\nb",
}

func decodeBoth(t *testing.T, doc []byte) (any, any) {
	t.Helper()
	// sigs.k8s.io/yaml is what kubectl uses (YAML 1.1 rules).
	viaKubectl, err := yaml.YAMLToJSON(doc)
	require.NoError(t, err, "%s", doc)
	var k any
	require.NoError(t, json.Unmarshal(viaKubectl, &k))
	var v3 any
	require.NoError(t, goyaml.Unmarshal(doc, &v3), "%s", doc)
	return k, v3
}

func roundTrip(t *testing.T, v any) {
	t.Helper()
	var enc Encoder
	doc, err := enc.AppendDocument(nil, v)
	require.NoError(t, err)
	want, err := json.Marshal(v)
	require.NoError(t, err)
	var wantTree any
	require.NoError(t, json.Unmarshal(want, &wantTree))

	k, v3 := decodeBoth(t, doc)
	assert.Equal(t, wantTree, k, "YAML 1.1 reading of:\n%s", doc)
	v3JSON, err := json.Marshal(v3)
	require.NoError(t, err)
	var v3Tree any
	require.NoError(t, json.Unmarshal(v3JSON, &v3Tree))
	assert.Equal(t, wantTree, v3Tree, "YAML 1.2 reading of:\n%s", doc)
}

func TestStringsReadBackAsTheSameStrings(t *testing.T) {
	for _, s := range trickyStrings {
		roundTrip(t, map[string]any{"value": s, s + "k": "key", "list": []any{s}})
	}
}

func TestNestedStructuresRoundTrip(t *testing.T) {
	roundTrip(t, map[string]any{
		"apiVersion": "tekton.dev/v1",
		"metadata":   map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "x", "b": "yes"}},
		"spec": map[string]any{
			"params":     []any{map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "b", "value": []any{"x", "y"}}},
			"emptyMap":   map[string]any{},
			"emptyList":  []any{},
			"nested":     []any{[]any{"a", "b"}, []any{}, map[string]any{}, map[string]any{"k": []any{map[string]any{"z": nil}}}},
			"numbers":    []any{json.Number("1"), json.Number("-2.5e3"), 3.25, true, false, nil},
			"listOfMaps": []any{map[string]any{"a": map[string]any{"b": map[string]any{"c": "d"}}, "e": []any{"f"}}},
		},
	})
}

func TestFragmentsAreRenderedOnceAndReusedIdentically(t *testing.T) {
	frag := &Fragment{Value: map[string]any{"tasks": []any{map[string]any{"name": "t", "params": []any{"a"}}}}}
	var enc Encoder
	var out []byte
	var err error
	for i := 0; i < 3; i++ {
		out, err = enc.AppendDocument(out, map[string]any{"spec": map[string]any{"pipelineSpec": frag, "n": json.Number("1")}})
		require.NoError(t, err)
	}
	// Same fragment inline in a list item: a different rendering, cached apart.
	out, err = enc.AppendDocument(out, []any{frag})
	require.NoError(t, err)
	docs := strings.Split(string(out), "---\n")[1:]
	require.Len(t, docs, 4)
	assert.Equal(t, docs[0], docs[1])
	assert.Equal(t, docs[0], docs[2])
	for _, d := range docs {
		decodeBoth(t, []byte(d))
	}
	assert.Equal(t, "- tasks:\n  - name: t\n    params:\n    - a\n", docs[3])
	assert.Len(t, enc.fragments, 2)
}

func TestStyle(t *testing.T) {
	var enc Encoder
	out, err := enc.AppendDocument(nil, map[string]any{
		"b": map[string]any{"c": "d"},
		"a": []any{map[string]any{"name": "x", "value": "1"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "---\na:\n- name: x\n  value: \"1\"\nb:\n  c: d\n", string(out), "sorted keys, lists at the key's indentation")
}

func TestUnsupportedValuesAreErrors(t *testing.T) {
	var enc Encoder
	_, err := enc.AppendDocument(nil, map[string]any{"c": make(chan int)})
	assert.Error(t, err)
}

func TestLeftFragmentsSpliceBackToTheSameBytes(t *testing.T) {
	frag := &Fragment{Value: map[string]any{"tasks": []any{map[string]any{"name": "t", "params": []any{"a", "b: c"}}}}}
	docs := []any{
		map[string]any{"a": "first", "spec": map[string]any{"pipelineSpec": frag, "z": []any{"after"}}},
		[]any{frag, "x", frag}, // inline in list items: a different rendering
		map[string]any{"pipelineSpec": frag},
		frag,
		map[string]any{"empty": &Fragment{Value: map[string]any{}}, "k": "v"},
	}
	var whole, left Encoder
	left.LeaveFragments = true
	var want, buf []byte
	for _, d := range docs {
		var err error
		want, err = whole.AppendDocument(want, d)
		require.NoError(t, err)
		buf, err = left.AppendDocument(buf, d)
		require.NoError(t, err)
	}
	splices := left.TakeSplices()
	assert.Len(t, splices, 5, "one per non-empty fragment written")
	assert.Less(t, len(buf), len(want)/2, "the fragments' bytes are left out")
	var got strings.Builder
	require.NoError(t, WriteSpliced(&got, buf, splices))
	assert.Equal(t, string(want), got.String())
	assert.Empty(t, left.TakeSplices(), "taken splices are forgotten")
}
