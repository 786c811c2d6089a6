package artifactpath

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for path, want := range map[string]string{
		"train:model:0":                      "",
		"Pusher:pushed_model:0[pushed == 1]": "",
		`a:b:3[x >= 0.5 && s == 'p && q' && ok != true && n == "y"]`: "",
		"train:model":                      "want COMPONENT:OUTPUT:INDEX",
		"train:model:x":                    "want COMPONENT:OUTPUT:INDEX",
		"a:b:c:0":                          "want COMPONENT:OUTPUT:INDEX",
		"train:model:0[]":                  "empty filter",
		"train:model:0[pushed = 1]":        "want KEY OP VALUE",
		"train:model:0[s < 'x']":           "compares numbers only",
		"train:model:0[a == 1 &&]":         "want KEY OP VALUE",
		"train:model:99999999999999999999": "too large",
	} {
		_, err := Parse(path)
		if want == "" {
			assert.NoError(t, err, path)
		} else if assert.Error(t, err, path) {
			assert.Contains(t, err.Error(), want, path)
		}
	}
	p, err := Parse(`a:b:3[x >= 0.5 && s == 'p && q']`)
	require.NoError(t, err)
	assert.Equal(t, Path{Component: "a", Output: "b", Index: 3, Filter: []Comparison{
		{Key: "x", Op: ">=", Value: 0.5}, {Key: "s", Op: "==", Value: "p && q"}}}, p)
}

func TestSelect(t *testing.T) {
	run := []Component{
		{Name: "train", Outputs: []Output{{Name: "model", Artifacts: []Artifact{{URI: "file:///r/train/model"}}}}},
		{Name: "Pusher", Outputs: []Output{{Name: "pushed_model", Artifacts: []Artifact{
			{URI: "gs://a", Metadata: map[string]any{"pushed": 0.0}},
			{URI: "gs://b", Metadata: map[string]any{"pushed": 1.0, "stage": "prod"}},
			{URI: "gs://c", Metadata: map[string]any{"pushed": 1.0, "stage": "dev"}},
		}}}},
	}
	for path, want := range map[string]string{
		"train:model:0":                      "file:///r/train/model",
		"train:model:1":                      "",
		"train:dataset:0":                    "",
		"eval:model:0":                       "",
		"Pusher:pushed_model:0":              "gs://a",
		"Pusher:pushed_model:0[pushed == 1]": "gs://b",
		"Pusher:pushed_model:1[pushed == 1]": "gs://c",
		"Pusher:pushed_model:0[pushed == 1 && stage == 'dev']":   "gs://c",
		"Pusher:pushed_model:0[pushed > 0.5 && stage != 'prod']": "gs://c",
		"Pusher:pushed_model:0[stage == 1]":                      "",
		"Pusher:pushed_model:0[missing == 1]":                    "",
		"train:model:0[pushed == 1]":                             "",
	} {
		p, err := Parse(path)
		require.NoError(t, err, path)
		got, ok := Select(p, run)
		assert.Equal(t, want != "", ok, path)
		assert.Equal(t, want, got, path)
	}
}
