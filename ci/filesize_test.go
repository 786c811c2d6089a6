package ci

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxFileLines bounds a Go file's length outside tests and generated code
// (issue 29); golangci-lint has no linter for a file's length, funlen (in
// .golangci.yml) bounds functions.
const maxFileLines = 600

// fileSizeAllowlist holds directories, relative to the repository root,
// whose files may exceed maxFileLines for now; keep it in step with the
// funlen exclusions in .golangci.yml.
var fileSizeAllowlist = []string{}

// generatedHeader is Go's marker of a generated file (go.dev/s/generatedcode).
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// TestGoFileSize fails on every Go file over maxFileLines lines that is
// neither a test nor generated, naming each with its length.
func TestGoFileSize(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed(rel) {
			return nil
		}
		lines, generated, err := countLines(path)
		if err != nil {
			return err
		}
		if !generated && lines > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it (issue 29)", rel, lines, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowed(rel string) bool {
	for _, dir := range fileSizeAllowlist {
		if strings.HasPrefix(rel, dir) {
			return true
		}
	}
	return false
}

// countLines counts path's lines and says whether it is generated.
func countLines(path string) (lines int, generated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for s.Scan() {
		lines++
		if !generated && generatedHeader.MatchString(s.Text()) {
			generated = true
		}
	}
	return lines, generated, s.Err()
}
