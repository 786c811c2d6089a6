package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkName fails unless s is a DNS-1123 subdomain of at most limit
// characters, and a label value when it fits in one.
func checkName(t *testing.T, what, s string, limit int) {
	t.Helper()
	if len(s) > limit {
		t.Fatalf("%s %q: %d characters, limit %d", what, s, len(s), limit)
	}
	if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
		t.Fatalf("%s %q is not a DNS-1123 subdomain: %v", what, s, errs)
	}
	if errs := validation.IsValidLabelValue(s); len(s) <= validation.LabelValueMaxLength && len(errs) > 0 {
		t.Fatalf("%s %q is not a label value: %v", what, s, errs)
	}
}

var nastyNames = []string{
	"", "-", ".", "..", "-.-", "a.-b", "..c.", "v0.7", "Pipeline", "Team_A", "Penguin!",
	"ünïcödé", "日本語", "\x00\xff\xfe", "a\nb", strings.Repeat("x", 300), strings.Repeat("a.", 100),
	strings.Repeat("-", 70), "UPPER.lower", "a..b", "a-.b", "0", "$(params.x)",
}

func FuzzName(f *testing.F) {
	for i, s := range nastyNames {
		f.Add(s, nastyNames[(i+1)%len(nastyNames)], "uid-1", "gen-2")
	}
	f.Fuzz(func(t *testing.T, a, b, id1, id2 string) {
		name := Name([]string{a, b}, id1, id2)
		checkName(t, "Name", name, maxNameLength)
		if again := Name([]string{a, b}, id1, id2); again != name {
			t.Fatalf("not deterministic: %q then %q", name, again)
		}
		// Distinct identities (as the hash sees them: each part terminated)
		// give distinct names.
		if other := Name([]string{a, b}, id1+"x", id2); other == name {
			t.Fatalf("identities (%q,%q) and (%q,%q) share name %q", id1, id2, id1+"x", id2, name)
		}
	})
}

func FuzzCompact(f *testing.F) {
	for i, s := range nastyNames {
		f.Add(63, s, nastyNames[(i+3)%len(nastyNames)])
	}
	f.Add(11, "abcdefghijkl", "")
	f.Add(10, "Abc", "")
	f.Add(1, "A", "")
	f.Add(253, strings.Repeat("a", 300), "b")
	f.Fuzz(func(t *testing.T, limit int, a, b string) {
		if limit < 1 || limit > 253 {
			return // no DNS-1123 subdomain is longer than 253 or shorter than 1
		}
		got := Compact(limit, a, b)
		checkName(t, "Compact", got, limit)
		if again := Compact(limit, a, b); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		if joined := a + "-" + b; sanitize(joined) == joined && len(joined) <= limit && got != joined {
			t.Fatalf("clean %q that fits %d changed to %q", joined, limit, got)
		}
		// Inputs that join to different text never share a result (the
		// hash keeps shortened or sanitised ones apart), given room for
		// the whole hash.
		if other := Compact(limit, a+"x", b); limit > hashLength && other == got {
			t.Fatalf("(%q,%q) and (%q,%q) share %q", a, b, a+"x", b, got)
		}
	})
}

func FuzzLabelValue(f *testing.F) {
	for i, s := range nastyNames {
		f.Add(s, nastyNames[(i+5)%len(nastyNames)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		v := LabelValue(a, b)
		checkName(t, "LabelValue", v, maxNameLength)
		if again := LabelValue(a, b); again != v {
			t.Fatalf("not deterministic: %q then %q", v, again)
		}
		p := GenerateNamePrefix(a, b)
		if len(p) > maxGenerateNameLength || !strings.HasSuffix(p, "-") {
			t.Fatalf("GenerateNamePrefix %q: want at most %d characters ending in -", p, maxGenerateNameLength)
		}
		// What the API server makes of it: five random characters appended.
		checkName(t, "generated name", p+"x7k2q", maxNameLength)
	})
}
