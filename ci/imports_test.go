package ci

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kfp-tekton-operator/kfp-tekton-operator/"

// layers orders the module's packages, lowest first (issue 29): a package
// may import its own layer and those below, never one above. A package is
// in the first layer with an entry that is its path or a parent of it.
// Every package must be in one: a new one is placed here on purpose.
var layers = []struct {
	name     string
	packages []string
}{
	{"API types", []string{"api"}},
	{"pure helpers (no API types, no clients)", []string{"internal/naming", "internal/cronspec", "internal/imageref",
		"internal/kfpcel", "internal/objectstore", "internal/yamlenc", "internal/compilerinject",
		"internal/localcluster", "internal/controller/inflight", "internal/controller/outcome",
		"internal/tektonprovider/meta", "internal/artifactpath", "internal/spechash"}},
	{"the contract and what the API types decide", []string{"internal/contract", "internal/seal",
		"internal/runcompletion", "internal/controller/status", "internal/controller/scheme",
		"internal/controller/predicates", "internal/controller/namespaces"}},
	{"the Tasks, the run generator, the KFP compiler and launcher", []string{"tasks", "pipelines", "generator",
		"internal/launcher", "internal/kfpir"}},
	{"services beside the engine", []string{"internal/eventserver", "internal/conversionwebhook", "internal/finalizerwebhook",
		"internal/tektonprovider", "internal/controller/completion", "internal/controller/publish"}},
	{"the engine", []string{"internal/controller/lifecycle"}},
	{"the controllers", []string{"internal/controller/pipeline", "internal/controller/run",
		"internal/controller/runschedule", "internal/controller/runconfiguration",
		"internal/controller/experiment", "internal/controller/provider"}},
	{"the operator's assembly", []string{"internal/controller/operator"}},
	{"test harnesses and fixtures", []string{"internal/testenv", "internal/testfixtures"}},
	{"programs, benchmarks and repository checks", []string{"cmd", "bench", "e2e", "config", "docs", "ci"}},
}

// layerOf is the index of pkg's layer (a path relative to the module), or
// -1.
func layerOf(pkg string) int {
	for i, l := range layers {
		if layerOfAny(pkg, l.packages) {
			return i
		}
	}
	return -1
}

// testMayImport are what a test of any package may use besides the layers
// below it: the harness that runs the operator assembled (envtests of the
// engine and the controllers run it whole) and its fixtures.
var testMayImport = []string{"internal/testenv", "internal/testfixtures", "internal/controller/operator"}

// TestNoImportPointsUp lists every package's imports, and its tests', and
// fails on each arrow that points to a higher layer (for tests, other than
// to testMayImport), or a package in no layer.
func TestNoImportPointsUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "e2e,chaos", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		from := strings.TrimPrefix(parts[0], module)
		fromLayer := layerOf(from)
		if fromLayer < 0 {
			t.Errorf("package %s is in no layer of ci/imports_test.go: place it", from)
			continue
		}
		for i, imports := range parts[1:] {
			byTest := i == 1
			for _, imp := range strings.Fields(imports) {
				to, ok := strings.CutPrefix(imp, module)
				if !ok || to == from {
					continue
				}
				checked++
				toLayer := layerOf(to)
				if toLayer <= fromLayer || byTest && layerOfAny(to, testMayImport) {
					continue
				}
				by := "imports"
				if byTest {
					by = "has a test importing"
				}
				t.Errorf("%s (%s) %s %s (%s), a layer above it", from, layers[fromLayer].name, by, to, layerName(toLayer))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no import of the module's packages seen: is go list's output what this test expects?")
	}
}

func layerOfAny(pkg string, parents []string) bool {
	for _, p := range parents {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

func layerName(i int) string {
	if i < 0 {
		return "in no layer"
	}
	return layers[i].name
}

func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]int{
		"api/v1beta1":                     0,
		"internal/contract/schema":        2,
		"internal/controller/lifecycle":   5,
		"internal/controller/pipeline":    6,
		"internal/controllerx":            -1, // a prefix match needs a slash
		"internal/objectstore/transfer":   1,
		"internal/tektonprovider/meta":    1,
		"internal/tektonprovider":         4,
		"cmd/kfp-task":                    9,
		"internal/testfixtures/provider":  8,
		"internal/somethingnew":           -1,
		"internal/controller/operator":    7,
		"internal/controller/status":      2,
		"internal/controller/inflight":    1,
		"internal/conversionwebhook/gen":  4,
		"bench/internal/measure":          9,
		"internal/localcluster/pause":     1,
		"internal/testenv/fixture":        8,
		"internal/controller/runschedule": 6,
		"internal/controller/predicates":  2, // its filters read API types
	} {
		if got := layerOf(pkg); got != want {
			t.Errorf("layerOf(%s) = %d, want %d", pkg, got, want)
		}
	}
}
