package lifecycle

import (
	"encoding/json"

	"github.com/tektoncd/pipeline/pkg/apis/pipeline/pod"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// CompileVolume is the volume a compiling operation's run claims to carry
// the compiled definition from the compile pod to the provider's.
type CompileVolume struct {
	// StorageClassName of the claim; nil uses the cluster's default class.
	StorageClassName *string
	// Size of the claim; DefaultCompileVolumeSize when zero.
	Size resource.Quantity
}

// DefaultCompileVolumeSize holds any definition a backend accepts (they
// travel in API requests, which are far smaller).
var DefaultCompileVolumeSize = resource.MustParse("64Mi")

// compileRun is what a compiling operation's run needs beyond its params.
type compileRun struct {
	// what is compiled, with which compiler (Prepared.Compile).
	what   *Compile
	volume CompileVolume
	// pullSecrets are the Provider's pipelineImagePullSecrets: the compile
	// pod runs a tenant's image, so it never inherits the provider service
	// account's pull secrets (which the compiler account does not have).
	pullSecrets []corev1.LocalObjectReference
}

// compileSettings is what the compile pod of p's runs is given to compile
// what.
func compileSettings(p *pipelinesv1beta1.Provider, volume CompileVolume, what *Compile) *compileRun {
	c := &compileRun{what: what, volume: volume}
	for _, s := range p.Spec.PipelineImagePullSecrets {
		c.pullSecrets = append(c.pullSecrets, corev1.LocalObjectReference{Name: s.Name})
	}
	return c
}

// compileParams are the params of a compiling run: the compile
// configuration (its pipeline root where the run's artifacts go), the
// compiler and the pipeline's image.
func compileParams(c *compileRun, artifacts *ArtifactLocation) (tektonv1.Params, error) {
	cfg := c.what.Config
	if artifacts != nil {
		cfg.PipelineRoot = artifacts.Location
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return tektonv1.Params{
		generator.StringParam(taskdef.ParamPipelineConfig, contract.EncodeParam(data)),
		generator.StringParam(taskdef.ParamCompilerImage, c.what.CompilerImage),
		generator.StringParam(taskdef.ParamPipelineImage, cfg.Image),
	}, nil
}

// definitionWorkspace binds the definition workspace to a fresh claim.
func definitionWorkspace(v CompileVolume) tektonv1.WorkspaceBinding {
	size := v.Size
	if size.IsZero() {
		size = DefaultCompileVolumeSize
	}
	return tektonv1.WorkspaceBinding{
		Name: taskdef.WorkspaceDefinition,
		VolumeClaimTemplate: &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: v.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		}},
	}
}

// compileTaskRunSpec runs the compile task as the compiler account, with
// no token mounted: tenant code gets no identity in the cluster. Its fsGroup
// is the steps' user, so the seal step (not root) can write the definition
// to a fresh volume, whose root a provisioner makes root's, 0755.
func compileTaskRunSpec(c *compileRun) tektonv1.PipelineTaskRunSpec {
	return tektonv1.PipelineTaskRunSpec{
		PipelineTaskName:   taskdef.CompilePipelineTask,
		ServiceAccountName: taskdef.CompilerServiceAccount,
		PodTemplate: &pod.Template{
			AutomountServiceAccountToken: ptr.To(false),
			ImagePullSecrets:             c.pullSecrets,
			SecurityContext: &corev1.PodSecurityContext{
				FSGroup:             ptr.To(taskdef.StepUser),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
			},
		},
	}
}
