package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func TestCheckVersion(t *testing.T) {
	assert.NoError(t, CheckVersion("provider", "resource", Version))
	err := CheckVersion("provider", "resource", "v2")
	assert.EqualError(t, err, `the resource has contractVersion "v2", but this provider understands only contractVersion v1: use a provider image made for this operator's version`)
	assert.ErrorContains(t, CheckVersion("compiler", "pipeline-config", ""), "the pipeline-config has no contractVersion")
}

// TestRunParametersHasOnePathPerPresence pins the seam's two paths: the
// operator sends resource.parameters (possibly empty) only when a Run's
// valueFrom was resolved; absent, spec.parameters must hold only values.
func TestRunParametersHasOnePathPerPresence(t *testing.T) {
	spec := []pipelinesv1beta1.RuntimeParameter{{Name: "epochs", Value: "10"}}
	resolved := []Parameter{{Name: "model", Value: "s3://up/m"}}

	got, err := RunParameters(Resource{Parameters: &resolved}, spec)
	assert.NoError(t, err)
	assert.Equal(t, resolved, got, "present: they replace spec.parameters")

	none := []Parameter{}
	got, err = RunParameters(Resource{Parameters: &none}, spec)
	assert.NoError(t, err)
	assert.Empty(t, got, "present but empty (every optional one left out): still no spec.parameters")

	got, err = RunParameters(Resource{}, spec)
	assert.NoError(t, err)
	assert.Equal(t, []Parameter{{Name: "epochs", Value: "10"}}, got, "absent: spec.parameters' values")

	unresolved := []pipelinesv1beta1.RuntimeParameter{{Name: "epochs", Value: "10"}, {Name: "model",
		ValueFrom: &pipelinesv1beta1.ValueFrom{RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: "up", OutputArtifact: "m"}}}}
	_, err = RunParameters(Resource{}, unresolved)
	assert.ErrorContains(t, err, `parameter "model": valueFrom was not resolved`)
}
