package release

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

var matrixSeeds = []string{
	validMatrix,
	"", "---", "null", "[]", "{}", "~", "namespace: [a]", "applications: {}", "versions: [1, 2]",
	"a: &a [*a, *a]", "namespace: Bad_NS\n", "manifestsRepo: x\napplications:\n  - {name: a}\nversions:\n  - {name: v}\n",
	validMatrix + "unknown: 1\n", validMatrix + "  - name: main\n    revision: x\n    manifestsBranch: x\n",
	strings.Replace(validMatrix, "name: operator", "name: "+strings.Repeat("o", 64), 1),
	strings.Replace(validMatrix, "name: main", "name: .hidden", 1),
	strings.Replace(validMatrix, "ghcr.io/org/operator", "ghcr.io/org/operator:v1", 1),
	strings.Replace(validMatrix, "namespace: ci", "namespace: !!binary aGk=", 1),
	"\t", "manifestsRepo: \"\\x00\"\n", "? [a]\n: b\n",
}

// FuzzParse: any file is a matrix or an error made of FieldErrors naming the
// file and a line, never a panic; an accepted matrix has names usable as
// label values and generateNames, so every pair's run labels are valid and
// its run builds.
func FuzzParse(f *testing.F) {
	for _, s := range matrixSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("m.yaml", data)
		if err != nil {
			if m != nil {
				t.Fatalf("a matrix beside error %v", err)
			}
			checkFieldErrors(t, err)
			return
		}
		if len(m.Applications) == 0 || len(m.Versions) == 0 || m.ManifestsRepo == "" {
			t.Fatalf("accepted a matrix without applications, versions or manifestsRepo: %+v", m)
		}
		pairs, err := m.Select(nil)
		if err != nil {
			t.Fatalf("Select(nil) of an accepted matrix: %v", err)
		}
		for _, p := range pairs {
			checkLabels(t, p)
		}
		runs, err := m.Runs(context.Background(), Options{})
		if err != nil || len(runs) != len(pairs) {
			t.Fatalf("an accepted matrix gave %d runs for %d pairs: %v", len(runs), len(pairs), err)
		}
	})
}

// FuzzSelect: any --selector either fails to parse or picks exactly the
// pairs whose labels it matches (an error when none), and the runs built
// for them carry those labels.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{
		"", "app=operator", "version notin (main)", "app in (operator,prgen),version=main", "app!=operator",
		"!version", "type=run", "app=nope", "app.kubernetes.io/name=prgen", "tekton.dev/pipeline",
		"app in ()", "app=(", "=", ",", "app==operator", "app=operator,,", "x/y/z=1", strings.Repeat("a", 300) + "=b",
	} {
		f.Add(s)
	}
	m, err := Parse("m.yaml", []byte(validMatrix))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, selector string) {
		sel, err := labels.Parse(selector)
		if err != nil {
			return
		}
		pairs, err := m.Select(sel)
		want := 0
		for _, a := range m.Applications {
			for _, v := range m.Versions {
				if sel.Matches(Pair{App: a, Version: v}.Labels()) {
					want++
				}
			}
		}
		switch {
		case want == 0 && err == nil:
			t.Fatalf("selector %q matches nothing, but Select returned %d pairs", selector, len(pairs))
		case want == 0:
			return
		case err != nil || len(pairs) != want:
			t.Fatalf("selector %q: Select returned %d pairs, %v; want %d", selector, len(pairs), err, want)
		}
		runs, err := m.Runs(context.Background(), Options{Selector: sel})
		if err != nil {
			t.Fatalf("Runs for selector %q: %v", selector, err)
		}
		for _, pr := range runs {
			if !sel.Matches(pr.Labels) {
				t.Fatalf("selector %q does not match the labels of run %s: %v", selector, pr.GenerateName, pr.Labels)
			}
		}
	})
}

func checkFieldErrors(t *testing.T, err error) {
	t.Helper()
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("error %v (%T) is not a FieldError", e, e)
		}
		if fe.File != "m.yaml" || fe.Line < 1 {
			t.Fatalf("FieldError %q: want file m.yaml and a line", fe)
		}
	}
}

func checkLabels(t *testing.T, p Pair) {
	t.Helper()
	for _, kv := range p.Labels() {
		if errs := validation.IsValidLabelValue(kv.Value); len(errs) > 0 {
			t.Fatalf("application %q version %q: label %s=%q: %v", p.App.Name, p.Version.Name, kv.Key, kv.Value, errs)
		}
	}
}
