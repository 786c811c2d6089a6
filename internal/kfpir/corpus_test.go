package kfpir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCompiledPipelineCorpus compiles every IR under $KFP_IR_CORPUS (a
// directory of pipelines the KFP SDK compiled, such as the SDK's own
// test_data/pipelines; not part of this repository) and reports how many
// compile to a valid Tekton Pipeline and, for the others, the feature
// refused. Every refusal must name a feature (an *UnsupportedError): any
// other error is a bug, in the reader or the compiler. Skipped without
// the variable.
//
//	KFP_IR_CORPUS=/path/to/pipelines go test ./internal/kfpir -run Corpus -v
func TestCompiledPipelineCorpus(t *testing.T) {
	dir := os.Getenv("KFP_IR_CORPUS")
	if dir == "" {
		t.Skip("KFP_IR_CORPUS is not set")
	}
	var files []string
	require := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	require(filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".json")) {
			files = append(files, path)
		}
		return err
	}))
	compiled, reasons := 0, map[string][]string{}
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		require(err)
		spec, err := Parse(data)
		if err == nil {
			_, err = Compile(spec, Options{Name: "corpus", LauncherImage: launcherImage})
		}
		var ue *UnsupportedError
		switch {
		case err == nil:
			compiled++
		case errors.As(err, &ue):
			reasons[ue.Feature] = append(reasons[ue.Feature], rel)
		default:
			t.Errorf("%s: not a refusal naming a feature: %v", rel, err)
			reasons["error: "+err.Error()] = append(reasons["error: "+err.Error()], rel)
		}
	}
	var lines []string
	for feature, which := range reasons {
		lines = append(lines, fmt.Sprintf("%3d  %s: %s", len(which), feature, strings.Join(which, ", ")))
	}
	sort.Strings(lines)
	t.Logf("%d of %d compile (%.0f%%); refused:\n%s", compiled, len(files), 100*float64(compiled)/float64(len(files)), strings.Join(lines, "\n"))
}
