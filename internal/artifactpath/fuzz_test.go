package artifactpath

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kfpPattern is kfp-operator's ArtifactPathPattern, written out again here
// so that a change to the package's copy shows.
var kfpPattern = regexp.MustCompile(`^([^\[\]:]+):([^\[\]:]+)(?::(\d*))?(?:\[([^\[\]:]+)\])?$`)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"train:model:0", "CsvExampleGen:examples", "Pusher:pushed_model:0[pushed == 1]", "a:b[x == 1 and (y != `q` or not z is empty)]",
		"a:b:0[]", "a:b:0[", "a:b:0[x == \"unterminated]", ":::", "a:b:99999999999999999999", "a:b:9223372036854775807",
		"a:b:0[x == 1 and and y == 2]", "ż:ó:0[ł == \"ć\"]", "a:b[(any l as v { v == 1 })]", "a:b[\"/l/0\" in m]", "a:b[x == 1}]",
		"a:b[(((((x == 1)))))]", "a:b:[x matches \"(\"]", "a:b[x == 'q']", "a:b[x >= 1]", "a:b]", "a:b[x]y",
	} {
		f.Add(s)
	}
	metadata := []map[string]any{
		nil,
		{"x": 1.0, "y": "q", "z": "", "l": []any{"a", 1.0, nil, map[string]any{"k": true}}, "m": map[string]any{"k": []any{}, "n": nil}, "b": true},
		{"x": int64(2), "y": []any{"q"}, "l": map[string]any{"v": 1.0}},
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := Parse(path)
		// Accepted exactly when kfp-operator's pattern matches and INDEX
		// fits an int; refused otherwise, saying why.
		m := kfpPattern.FindStringSubmatch(path)
		indexFits := true
		if m != nil && m[3] != "" {
			_, aerr := strconv.Atoi(m[3])
			indexFits = aerr == nil
		}
		var fe *FilterError
		isFilterErr := errors.As(err, &fe)
		if (m != nil && indexFits) != (err == nil || isFilterErr) {
			t.Fatalf("Parse(%q) = %v, kfp-operator's pattern matches: %v", path, err, m != nil)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "artifact path ") || strings.HasSuffix(err.Error(), ": ") {
				t.Fatalf("Parse(%q): error %q", path, err)
			}
			if isFilterErr && (fe.Filter != m[4] || fe.Column < 1 || fe.Column > len([]rune(fe.Filter))+1 || fe.Reason == "") {
				t.Fatalf("Parse(%q): %#v", path, fe)
			}
			return
		}
		if p.Component != m[1] || p.Output != m[2] || p.Filter != m[4] || p.Index < 0 || (p.Filter != "") != (p.filter != nil) {
			t.Fatalf("Parse(%q) = %+v", path, p)
		}
		// Selecting never panics, whatever the metadata.
		for _, md := range metadata {
			Select(p, []Component{{Name: p.Component, Outputs: []Output{{Name: p.Output, Artifacts: []Artifact{{URI: "u", Metadata: md}}}}}})
			ok, err := p.Explain(md)
			if p.Holds(md) != (ok && err == nil) {
				t.Fatalf("%q: Holds and Explain (%v, %v) disagree", path, ok, err)
			}
		}
	})
}
