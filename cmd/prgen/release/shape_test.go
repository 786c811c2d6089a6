package release

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/yamlenc"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
)

// The release shape is printed as written: it must already be what Tekton's
// decoding and defaulting make of it, or prgen would print a different spec
// than the operator's typed path (and Tekton's webhook) sees.
func TestReleaseShapeIsWrittenAsTektonDefaultsIt(t *testing.T) {
	s, err := loadReleaseShape()
	require.NoError(t, err)
	typed, err := pipelines.Get(pipelines.Release)
	require.NoError(t, err)
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	require.NoError(t, err)
	assert.Equal(t, asJSON(t, want), asJSON(t, s.tree))
	if ferr := typed.Validate(context.Background()); ferr != nil {
		t.Fatalf("Tekton refuses the release shape: %v", ferr)
	}
}

func TestShapeRefusesWhatItCannotPrintAsWritten(t *testing.T) {
	for name, tc := range map[string]struct{ shape, want string }{
		"untyped param":      {"params:\n  - name: a\n", `param "a": type "", want string written out`},
		"array param":        {"params:\n  - name: a\n    type: array\n", `param "a": type "array"`},
		"unnamed param":      {"params:\n  - type: string\n", "params[0]: no name"},
		"non-string default": {"params:\n  - name: a\n    type: string\n    default: [x]\n", `param "a": default [x] is not a string`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseShape([]byte(tc.shape))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestPairLabelsAreSortedAndUnique(t *testing.T) {
	l := Pair{App: Application{Name: "a"}, Version: Version{Name: "v"}}.Labels()
	for i := 1; i < len(l); i++ {
		assert.Less(t, l[i-1].Key, l[i].Key)
	}
	assert.Equal(t, "v", l.Get(LabelVersion))
	assert.False(t, l.Has("nope"))
}

// The YAML printer writes the fixed part of a run itself; it must give the
// bytes the generic encoder gives for the run's tree, whatever the strings.
func TestYAMLPrinterWritesTheTree(t *testing.T) {
	s, err := loadReleaseShape()
	require.NoError(t, err)
	odd := []string{"", "yes", "a: b", "- x", "#", "line\nbreak", "tab\t", "ünï", "12", "null", " lead", "\"q\"", "$(x)"}
	var runs []*Run
	for i, v := range odd {
		r := &Run{GenerateName: v + "-", Labels: Labels{{"a", v}, {"b" + v, "x"}}, shape: s,
			Params: []Param{{"app", v}, {v, "v"}}}
		switch i % 3 {
		case 0:
			r.Namespace, r.ServiceAccountName = v, v
		case 1:
			r.Workspaces = []Workspace{{v, v}, {"docker-config", "s"}}
			r.Labels, r.Params = nil, nil
		}
		runs = append(runs, r)
	}
	var want []byte
	var enc yamlenc.Encoder
	spec := &yamlenc.Fragment{Value: s.tree}
	for _, r := range runs {
		want, err = enc.AppendDocument(want, runTree(r, spec))
		require.NoError(t, err)
	}
	var got bytes.Buffer
	require.NoError(t, Write(&got, runs, "yaml"))
	assert.Equal(t, string(want), got.String())
}

// FuzzRunsPassTektonValidation: every run prgen prints for a matrix it
// accepts passes Tekton's own PipelineRun validation, read back from yaml and
// from json; check stands in for that validation in the command, which does
// not link Tekton.
func FuzzRunsPassTektonValidation(f *testing.F) {
	for _, s := range matrixSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(validMatrix + "serviceAccount: bot\ncredentials:\n  git: g\n  registry: r\ntools:\n  git: x/y:1\n"))
	f.Add([]byte(strings.Replace(validMatrix, "name: operator", "name: "+strings.Repeat("o", 63), 1)))
	f.Add([]byte(strings.Replace(validMatrix, "revision: main", "revision: \"a $ b\\n#c\"", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("m.yaml", data)
		if err != nil {
			return
		}
		runs, err := m.Runs(context.Background(), Options{})
		if err != nil {
			t.Fatalf("an accepted matrix: %v", err)
		}
		var asYAML, asJSON bytes.Buffer
		if err := Write(&asYAML, runs, "yaml"); err != nil {
			t.Fatal(err)
		}
		if err := Write(&asJSON, runs, "json"); err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []tektonv1.PipelineRun }
		if err := json.Unmarshal(asJSON.Bytes(), &list); err != nil {
			t.Fatalf("json: %v", err)
		}
		docs := strings.Split(asYAML.String(), "---\n")[1:]
		if len(docs) != len(runs) || len(list.Items) != len(runs) {
			t.Fatalf("%d runs printed as %d yaml documents and %d json items", len(runs), len(docs), len(list.Items))
		}
		for i, doc := range docs {
			var pr tektonv1.PipelineRun
			if err := yaml.UnmarshalStrict([]byte(doc), &pr); err != nil {
				t.Fatalf("yaml document %d: %v", i, err)
			}
			if err := generator.Validate(context.Background(), &pr); err != nil {
				t.Fatalf("Tekton refuses a printed run: %v", err)
			}
			if want, got := asJSONValue(t, &list.Items[i]), asJSONValue(t, &pr); want != got {
				t.Fatalf("run %d differs between json and yaml:\n%s\n%s", i, want, got)
			}
			if pr.Spec.Params[0].Value.StringVal != m.Applications[i/len(m.Versions)].Name {
				t.Fatalf("run %d: first param %+v", i, pr.Spec.Params[0])
			}
		}
	})
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func asJSONValue(t *testing.T, pr *tektonv1.PipelineRun) string {
	data, err := json.Marshal(pr)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestBindRefusesAValueForAnUndeclaredParam(t *testing.T) {
	s, err := parseShape([]byte("params:\n  - name: app\n    type: string\n"))
	require.NoError(t, err)
	err = s.bind(releaseParams)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not declare params builder-image, context, dockerfile, git-image, git-revision, git-url,")
	assert.Contains(t, err.Error(), "(declared: app)")
	require.NoError(t, s.bind(map[string]paramValue{ParamApp: releaseParams[ParamApp]}))
	assert.NotNil(t, s.values[0])
}
