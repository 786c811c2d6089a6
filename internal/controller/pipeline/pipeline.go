// Package pipeline is the Pipeline controller: a thin Kind over the
// lifecycle engine. Creating a Pipeline compiles it with the provider's
// compiler for its framework and creates it in the backend; a change of what
// compiles (image, env, framework, or the provider's compiler image: see
// Version) compiles it again and uploads it as a new version. Deleting a
// Pipeline waits for a running create or update to end, then deletes it from
// the backend; the finalizer holds it until that succeeded (a failure is
// reported and retried), and the skip-backend-deletion annotation lets it go
// without. Tests: envtest_test.go, with the whole operator.
package pipeline

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Kind is the Pipeline kind for the lifecycle engine.
var Kind lifecycle.Kind[*pipelinesv1beta1.Pipeline] = kind{}

type kind struct{}

func (kind) Traits() lifecycle.Traits {
	return lifecycle.Traits{Name: "pipeline", UsesArtifacts: true}
}

func (kind) New() *pipelinesv1beta1.Pipeline { return &pipelinesv1beta1.Pipeline{} }

func (kind) Inputs(p *pipelinesv1beta1.Pipeline) lifecycle.Inputs {
	return lifecycle.Inputs{Spec: p.Spec, ArtifactRepository: p.Spec.ArtifactRepositoryRef}
}

// Prepare is the Pipeline's version and what it compiles, with the
// provider's compiler for its framework (looked up once for both).
func (kind) Prepare(p *pipelinesv1beta1.Pipeline, provider *pipelinesv1beta1.Provider) (lifecycle.Prepared, error) {
	compiler, err := compilerImage(p, provider)
	if err != nil {
		return lifecycle.Prepared{}, err
	}
	version, err := version(p, compiler)
	if err != nil {
		return lifecycle.Prepared{}, err
	}
	return lifecycle.Prepared{Version: version, Compile: &lifecycle.Compile{CompilerImage: compiler,
		Config: contract.CompileConfig{ContractVersion: contract.Version, Name: p.Name, Namespace: p.Namespace, Image: p.Spec.Image,
			Env: p.Spec.Env, Framework: p.Spec.Framework, BeamArgs: provider.Spec.DefaultBeamArgs}}}, nil
}

func (kind) Record(*pipelinesv1beta1.Pipeline, lifecycle.Outputs) {}

// version is the image's tag and a short hash over the image, env,
// framework and the provider's compiler image digest: a new compiler
// recompiles every pipeline of its framework.
func version(p *pipelinesv1beta1.Pipeline, compiler string) (string, error) {
	hash, err := spechash.Of(struct {
		Image     string                             `json:"image"`
		Env       []pipelinesv1beta1.NamedValue      `json:"env"`
		Framework pipelinesv1beta1.PipelineFramework `json:"framework"`
		Compiler  string                             `json:"compiler"`
	}{p.Spec.Image, p.Spec.Env, p.Spec.Framework, compiler})
	if err != nil {
		return "", err
	}
	return naming.Compact(63, imageTag(p.Spec.Image), hash[:7]), nil
}

// imageTag is the tag of image, or a short digest, or "latest".
func imageTag(image string) string {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "latest"
	}
	switch r := ref.(type) {
	case name.Tag:
		return r.TagStr()
	case name.Digest:
		return strings.TrimPrefix(r.DigestStr(), "sha256:")[:12]
	}
	return "latest"
}

// compilerImage is the pinned compiler image of the pipeline's framework.
func compilerImage(p *pipelinesv1beta1.Pipeline, provider *pipelinesv1beta1.Provider) (string, error) {
	var offered []string
	for _, f := range provider.Status.Frameworks {
		if f.Name == p.Spec.Framework.Name {
			return f.Image, nil
		}
		offered = append(offered, f.Name)
	}
	return "", fmt.Errorf("spec.framework.name: provider %s/%s offers no framework %q (offers: %s)",
		provider.Namespace, provider.Name, p.Spec.Framework.Name, strings.Join(offered, ", "))
}
