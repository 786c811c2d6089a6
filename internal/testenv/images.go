package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Images reads bin/images.env, the KEY=reference lines
// hack/install-operator.sh writes for what it pushed to the local cluster's
// registry (operator, providers, compilers, fixtures).
func Images() (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "bin", "images.env"))
	if err != nil {
		return nil, fmt.Errorf("image references (make demo, or hack/install-operator.sh, writes them): %w", err)
	}
	images := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			images[k] = v
		}
	}
	return images, nil
}
