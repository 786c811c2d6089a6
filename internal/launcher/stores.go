package launcher

import (
	"fmt"
	"path"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// ReadableStores names the artifact stores the launcher can read input
// artifacts from, for error messages.
const ReadableStores = "file:// under a file:// pipeline root (the artifacts volume), s3:// and minio:// under an object-store pipeline root (the Provider's S3 store)"

// CheckInputStore says whether the launcher can read an input artifact at
// uri, given the run's pipeline root. An importer records any URI (KFP's
// importer does not touch the store), so the consumer is where a URI in a
// store this backend cannot read must fail: by name, before the component
// runs, not as a missing file found later by user code.
func CheckInputStore(uri, pipelineRoot string) error {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" {
		return fmt.Errorf("input artifact URI %q has no scheme; the supported stores are %s", uri, ReadableStores)
	}
	if objectstore.Supported(pipelineRoot) {
		return checkObjectStore(uri, pipelineRoot)
	}
	if scheme != "file" {
		return fmt.Errorf("input artifact %s: the %s:// store is not supported; the supported stores are %s", uri, scheme, ReadableStores)
	}
	rootPath, ok := strings.CutPrefix(pipelineRoot, "file://")
	if !ok || !strings.HasPrefix(rootPath, "/") {
		return fmt.Errorf("input artifact %s: the pipeline root %q is not a file:/// root; the supported stores are %s", uri, pipelineRoot, ReadableStores)
	}
	if !strings.HasPrefix(rest, "/") {
		return fmt.Errorf("input artifact %s: a file:// URI must be an absolute path (file:///...)", uri)
	}
	p, root := path.Clean(rest), path.Clean(rootPath)
	if p != root && !strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/") {
		return fmt.Errorf("input artifact %s is not under the pipeline root %s, the only volume a task mounts; the supported stores are %s", uri, pipelineRoot, ReadableStores)
	}
	return nil
}

// checkObjectStore: with an object-store root, the task's fetch step has
// downloaded the artifacts of the root (and refused any other).
func checkObjectStore(uri, pipelineRoot string) error {
	root, err := objectstore.Parse(pipelineRoot)
	if err != nil {
		return fmt.Errorf("input artifact %s: the pipeline root: %w", uri, err)
	}
	if _, err := objectstore.Allowed(uri, root); err != nil {
		return fmt.Errorf("input artifact: %w; the supported stores are %s", err, ReadableStores)
	}
	return nil
}
