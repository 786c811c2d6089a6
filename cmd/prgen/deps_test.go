package main

import (
	"os/exec"
	"strings"
	"testing"
)

// prgen prints runs without Tekton's packages, whose initialisation was half
// of a short run's time (docs/scale.md); its tests, not the binary, hold its
// output to Tekton's validation. This keeps an import from bringing them back.
func TestPrgenDoesNotLinkTekton(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/tektoncd/") || strings.HasPrefix(pkg, "knative.dev/") {
			t.Errorf("prgen links %s", pkg)
		}
	}
}
