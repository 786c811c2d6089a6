package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// vocabularyFiles define every label, annotation, finalizer and index key
// (issue 29), relative to root.
var vocabularyFiles = []string{"api/v1beta1/vocabulary.go", "internal/contract/vocabulary.go",
	"internal/contract/tektonprovider.go", "internal/contract/index.go"}

// vocabularyKeys are the keys the vocabulary files define, by Go name.
func vocabularyKeys(t *testing.T) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, file := range vocabularyFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if i >= len(spec.Values) || !regexp.MustCompile(`^(Label|Annotation|Finalizer|Index)`).MatchString(name.Name) {
					continue
				}
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					keys[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
			return true
		})
	}
	return keys
}

// TestVocabularyListsEveryKey: docs/vocabulary.md has a row for each key
// the vocabulary files define, naming its value and its Go name.
func TestVocabularyListsEveryKey(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "docs", "vocabulary.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	keys := vocabularyKeys(t)
	if len(keys) < 50 {
		t.Fatalf("found only %d keys in %v: has the vocabulary moved?", len(keys), vocabularyFiles)
	}
	for name, value := range keys {
		listed := false
		for _, row := range rows {
			if strings.HasPrefix(row, "| `"+value+"` |") && strings.Contains(row, "`"+name+"`") {
				listed = true
				break
			}
		}
		if !listed {
			t.Errorf("docs/vocabulary.md has no row for %s (`%s`)", name, value)
		}
	}
}

// TestKeysAreDefinedOnce: outside the vocabulary files (and tests), no Go
// file spells a key of the project's own domain (pipelines.kubeflow.org)
// as a string literal; it uses the vocabulary's constant.
func TestKeysAreDefinedOnce(t *testing.T) {
	key := regexp.MustCompile(`^([a-z0-9-]+\.)*pipelines\.kubeflow\.org/[a-z][a-z0-9._-]*$`)
	// API versions and group names are not keys.
	apiVersion := regexp.MustCompile(`/v[0-9]+((alpha|beta)[0-9]+)?$`)
	skip := map[string]bool{}
	for _, f := range vocabularyFiles {
		skip[f] = true
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || skip[rel] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && key.MatchString(s) && !apiVersion.MatchString(s) {
					t.Errorf("%s: key %q: define it in the vocabulary (docs/vocabulary.md) and use its constant", rel, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
