package artifactpath

import (
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"train:model:0", "Pusher:pushed_model:0[pushed == 1]", `a:b:3[x >= 0.5 && s == 'p && q']`, "a:b:0[]", "a:b:0[",
		"a:b:0[x == 'unterminated]", ":::", "a:b:99999999999999999999", "a:b:0[x == 1 && && y == 2]", "ż:ó:0[ł == \"ć\"]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := Parse(path)
		if err != nil {
			return
		}
		if p.Component == "" || p.Output == "" || p.Index < 0 || strings.ContainsAny(p.Component+p.Output, ":[]") {
			t.Fatalf("Parse(%q) = %+v", path, p)
		}
		for _, c := range p.Filter {
			switch c.Value.(type) {
			case float64, string, bool:
			default:
				t.Fatalf("Parse(%q): value %#v", path, c.Value)
			}
		}
		// Selecting never panics, whatever the metadata.
		Select(p, []Component{{Name: p.Component, Outputs: []Output{{Name: p.Output, Artifacts: []Artifact{
			{URI: "u", Metadata: map[string]any{"x": 1.0, "s": "p && q", "pushed": true}}}}}}})
	})
}
