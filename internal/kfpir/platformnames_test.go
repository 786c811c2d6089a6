package kfpir

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamesFromParameters: Secrets and ConfigMaps named by a pipeline
// input or a task's output are TaskSpec params in the env var's key ref
// and the volume (Tekton substitutes both); a constant is a name.
func TestNamesFromParameters(t *testing.T) {
	spec := load(t, "pvc_create_mount_delete.yaml")
	spec.PlatformSpec = platformOf(`"exec-reader":{
		"secretAsEnv":[{"secretNameParameter":{"componentInputParameter":"data_claim"},"keyToEnv":[{"secretKey":"token","envVar":"TOKEN"}]}],
		"configMapAsEnv":[{"configMapNameParameter":{"runtimeValue":{"constant":"settings"}},"keyToEnv":[{"configMapKey":"mode","envVar":"MODE"}]}],
		"secretAsVolume":[{"secretNameParameter":{"taskOutputParameter":{"producerTask":"createpvc","outputParameterKey":"name"}},"mountPath":"/certs"}],
		"configMapAsVolume":[{"configMapNameParameter":{"componentInputParameter":"data_claim"},"mountPath":"/settings"}]}`)
	p := compileValid(t, spec, Options{Name: "x", Namespace: "team-a", LauncherImage: launcherImage})
	reader := byName(p.Spec.Tasks)["reader"]
	main := step(t, reader, MainStep)
	env := map[string]string{}
	for _, e := range main.Env {
		switch {
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = e.ValueFrom.SecretKeyRef.Name
		case e.ValueFrom.ConfigMapKeyRef != nil:
			env[e.Name] = e.ValueFrom.ConfigMapKeyRef.Name
		}
	}
	assert.Equal(t, map[string]string{"TOKEN": "$(params.kfp-secretAsEnv-0)", "MODE": "settings"}, env)
	assert.Equal(t, "$(params.data_claim)", paramValue(reader, "kfp-secretAsEnv-0"))
	assert.Equal(t, "$(params.data_claim)", paramValue(reader, "kfp-configMapAsVolume-0"))
	assert.Equal(t, "$(tasks.createpvc.results.name)", paramValue(reader, "kfp-secretAsVolume-0"))
	vols := map[string]string{}
	for _, v := range reader.TaskSpec.Volumes {
		switch {
		case v.Secret != nil:
			vols[v.Name] = v.Secret.SecretName
		case v.ConfigMap != nil:
			vols[v.Name] = v.ConfigMap.Name
		}
	}
	assert.Equal(t, map[string]string{"kfp-secret-0": "$(params.kfp-secretAsVolume-0)", "kfp-configmap-0": "$(params.kfp-configMapAsVolume-0)"}, vols)
	assert.Contains(t, reader.RunAfter, "createpvc")

	_, err := Compile(spec, Options{Name: "x", Namespace: "workflows", TenantNamespace: "team-a", LauncherImage: launcherImage})
	var ue *UnsupportedError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, "kfp-kubernetes Secret of another namespace", ue.Feature, "a name from a parameter could be any of the runs' namespace")
}
