// Package shapes holds the pipelineSpec shapes as written, one YAML file per
// shape, compiled into the binaries. It imports nothing of Tekton's, so a
// command that only prints a shape (prgen) starts without initialising
// Tekton's API packages; package pipelines decodes and defaults them for the
// operator.
package shapes

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Release is the shape prgen uses: build-push, then update-manifests.
const Release = "release"

//go:embed *.yaml
var files embed.FS

// Read returns the named shape's YAML.
func Read(name string) ([]byte, error) {
	data, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no pipeline shape %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}

// Names lists the shapes, sorted.
func Names() []string {
	entries, _ := fs.Glob(files, "*.yaml")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e, ".yaml"))
	}
	sort.Strings(names)
	return names
}
