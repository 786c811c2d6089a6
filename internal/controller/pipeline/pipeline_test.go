package pipeline

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func fixtures() (*pipelinesv1beta1.Pipeline, *pipelinesv1beta1.Provider) {
	p := &pipelinesv1beta1.Pipeline{Spec: pipelinesv1beta1.PipelineSpec{Image: "example.com/penguin:0.3.1",
		Env: []pipelinesv1beta1.NamedValue{{Name: "A", Value: "1"}}, Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx"}}}
	prv := &pipelinesv1beta1.Provider{Status: pipelinesv1beta1.ProviderStatus{
		Frameworks: []pipelinesv1beta1.Framework{{Name: "tfx", Image: "example.com/tfx:1@sha256:" + strings.Repeat("a", 64)}}}}
	return p, prv
}

func TestVersionIsTagPlusHashOfWhatCompiles(t *testing.T) {
	p, prv := fixtures()
	v, err := versionOf(p, prv)
	require.NoError(t, err)
	assert.Regexp(t, `^0\.3\.1-[0-9a-f]{7}$`, v)
	again, _ := versionOf(p, prv)
	assert.Equal(t, v, again, "deterministic")

	changes := map[string]func(*pipelinesv1beta1.Pipeline, *pipelinesv1beta1.Provider){
		"env": func(p *pipelinesv1beta1.Pipeline, _ *pipelinesv1beta1.Provider) { p.Spec.Env[0].Value = "2" },
		"image": func(p *pipelinesv1beta1.Pipeline, _ *pipelinesv1beta1.Provider) {
			p.Spec.Image = "example.com/penguin:0.3.2"
		},
		"framework": func(p *pipelinesv1beta1.Pipeline, _ *pipelinesv1beta1.Provider) {
			p.Spec.Framework.Parameters = nil
			p.Spec.Framework.Name = "tfx2"
		},
		"compiler digest": func(_ *pipelinesv1beta1.Pipeline, prv *pipelinesv1beta1.Provider) {
			prv.Status.Frameworks[0].Image = "example.com/tfx:1@sha256:" + strings.Repeat("b", 64)
		},
	}
	for name, change := range changes {
		p, prv := fixtures()
		prv.Status.Frameworks = append(prv.Status.Frameworks, pipelinesv1beta1.Framework{Name: "tfx2", Image: "example.com/tfx2:1"})
		base, err := versionOf(p, prv)
		require.NoError(t, err)
		change(p, prv)
		changed, err := versionOf(p, prv)
		require.NoError(t, err, name)
		assert.NotEqual(t, base, changed, "%s changes the version", name)
	}
}

func TestImageTag(t *testing.T) {
	assert.Equal(t, "0.3.1", imageTag("example.com/p:0.3.1"))
	assert.Equal(t, "latest", imageTag("example.com/p"))
	assert.Equal(t, strings.Repeat("c", 12), imageTag("example.com/p@sha256:"+strings.Repeat("c", 64)))
}

func TestUnknownFramework(t *testing.T) {
	p, prv := fixtures()
	p.Spec.Framework.Name = "kfpsdk"
	_, err := versionOf(p, prv)
	assert.ErrorContains(t, err, `offers no framework "kfpsdk" (offers: tfx)`)
}

// versionOf is the version Prepare gives p with provider.
func versionOf(p *pipelinesv1beta1.Pipeline, provider *pipelinesv1beta1.Provider) (string, error) {
	prepared, err := Kind.Prepare(p, provider)
	return prepared.Version, err
}

// The engine carries a version whole in a run label, so every version a
// Pipeline can have is a label value, whatever its image's tag.
func TestVersionIsALabelValueForAnyTag(t *testing.T) {
	for _, image := range []string{
		"example.com/p:" + strings.Repeat("x", 128),
		"example.com/p:_leading",
		"example.com/p:trailing.",
		"example.com/p:1.0.0__rc.1--x",
		"example.com/p@sha256:" + strings.Repeat("d", 64),
		"example.com/p",
	} {
		p, prv := fixtures()
		p.Spec.Image = image
		v, err := versionOf(p, prv)
		require.NoError(t, err, image)
		assert.Empty(t, validation.IsValidLabelValue(v), "%s: %q", image, v)
	}
}
