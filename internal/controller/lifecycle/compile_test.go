package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// The compile pod pulls with the Provider's pipelineImagePullSecrets and
// nothing else: none unless the Provider names some.
func TestCompilePodsPullWithThePipelineImagePullSecretsOnly(t *testing.T) {
	none := compileTaskRunSpec(compileSettings(&pipelinesv1beta1.Provider{}, CompileVolume{}, &Compile{}))
	if len(none.PodTemplate.ImagePullSecrets) != 0 {
		t.Errorf("a Provider naming no pull secrets gives the compile pod %v", none.PodTemplate.ImagePullSecrets)
	}
	p := &pipelinesv1beta1.Provider{Spec: pipelinesv1beta1.ProviderSpec{
		PipelineImagePullSecrets: []pipelinesv1beta1.PullSecretReference{{Name: "pipelines-a"}, {Name: "pipelines-b"}}}}
	named := compileTaskRunSpec(compileSettings(p, CompileVolume{}, &Compile{}))
	want := []corev1.LocalObjectReference{{Name: "pipelines-a"}, {Name: "pipelines-b"}}
	if got := named.PodTemplate.ImagePullSecrets; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("compile pod pull secrets = %v, want %v", got, want)
	}
}
