package tektonprovider

// Where runs keep their artifacts on the Provider's artifacts claim, and
// which part of the claim a run may touch.
//
// The claim is shared by every namespace the Provider admits, but a run
// mounts only the directory of its resource's namespace (the volume's
// subPath), at the pipeline root plus that directory's name. A step of one
// namespace's run therefore has no path to another namespace's files: ".."
// from its mount leads into its container's own filesystem, not to the
// claim's root. Because the mount path carries the directory too, an
// artifact's file:// URI names the same file inside the run's pods and on
// the claim (the claim's root standing for the pipeline root).

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// NamespaceDirectory is the directory of the artifacts claim that holds
// the runs of one namespace's resources: the namespace's name. A namespace
// name is a DNS label, so it is a single path component that can be
// neither "." nor ".." and that no other namespace shares; it is checked
// all the same, since the isolation of the namespaces' artifacts rests on
// it.
func NamespaceDirectory(namespace string) (string, error) {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", fmt.Errorf("namespace %q cannot name a directory of the artifacts volume: %s", namespace, errs[0])
	}
	return namespace, nil
}

// basePipelineRoot is the root kfpir would choose for definition on its
// own: the configured file:// repository, else the IR's file:// default,
// else kfpir.DefaultPipelineRoot.
func basePipelineRoot(configured string, spec *kfpir.PipelineSpec) string {
	switch {
	case configured != "":
		return configured
	case strings.HasPrefix(spec.DefaultPipelineRoot, "file://"):
		return spec.DefaultPipelineRoot
	}
	return kfpir.DefaultPipelineRoot
}

// namespacePipelineRoot is the pipeline root of a namespace's runs: base
// with the namespace's directory appended. base must be a file:// URI of
// an absolute path other than "/" (kfpir's rule, checked here because
// appending the directory would hide a root of "/"), or an object store's
// (s3://bucket/prefix), whose namespace part is then a prefix of its own.
func namespacePipelineRoot(base, dir string) (string, error) {
	if objectstore.Supported(base) {
		o, err := objectstore.Parse(base)
		if err != nil {
			return "", fmt.Errorf("pipeline root %s: %w", base, err)
		}
		o.Key = strings.TrimPrefix(o.Key+"/"+dir, "/")
		return o.String(), nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "file" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || !path.IsAbs(u.Path) {
		return "", fmt.Errorf("pipeline root %s: only file:///absolute/path roots (a volume) are supported", base)
	}
	clean := path.Clean(u.Path)
	if clean == "/" {
		return "", fmt.Errorf("pipeline root %s: the root cannot be /", base)
	}
	return "file://" + path.Join(clean, dir), nil
}

// runArtifactsDirectory is the directory of the artifacts claim a run of
// a resource in resourceNamespace mounts: that namespace's, never one the
// Pipeline names. The Pipeline must have been compiled for the same
// namespace, as its artifact URIs name that namespace's directory. (One
// compiled before per-namespace directories records none: its runs still
// mount only their namespace's directory, and its URIs, naming no
// directory, still resolve inside those runs.)
func runArtifactsDirectory(resourceNamespace string, p *tektonv1.Pipeline) (string, error) {
	dir, err := NamespaceDirectory(resourceNamespace)
	if err != nil {
		return "", err
	}
	if compiled, ok := p.Annotations[contract.AnnotationArtifactsDirectory]; ok && compiled != dir {
		return "", fmt.Errorf("the Tekton Pipeline %s keeps its artifacts in the directory of namespace %q: a run of namespace %q cannot run it",
			p.Name, compiled, resourceNamespace)
	}
	return dir, nil
}
