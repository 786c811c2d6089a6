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
// refused. A refusal names a feature (an *UnsupportedError), or says what
// is wrong with the document; a compiled Pipeline that Tekton's
// validation refuses is a bug of the compiler, and fails the test.
// Skipped without the variable.
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
		case strings.Contains(err.Error(), "fails Tekton validation"):
			t.Errorf("%s: the compiler made an invalid Pipeline: %v", rel, err)
			reasons["bug: "+err.Error()] = append(reasons["bug: "+err.Error()], rel)
		default:
			// Not a feature: the document itself is wrong (an SDK's bug).
			reasons["invalid IR: "+err.Error()] = append(reasons["invalid IR: "+err.Error()], rel)
		}
	}
	var lines []string
	for feature, which := range reasons {
		lines = append(lines, fmt.Sprintf("%3d  %s: %s", len(which), feature, strings.Join(which, ", ")))
	}
	sort.Strings(lines)
	t.Logf("%d of %d compile (%.0f%%); refused:\n%s", compiled, len(files), 100*float64(compiled)/float64(len(files)), strings.Join(lines, "\n"))
}
