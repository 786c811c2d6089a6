package kfpir

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

func TestEphemeralVolumes(t *testing.T) {
	cases := []struct {
		name, config, err string
		class             *string // want storageClassName
	}{
		{name: "default class, as the SDK writes it",
			config: `{"genericEphemeralVolume":[{"accessModes":["ReadWriteOnce"],"defaultStorageClass":true,"metadata":{"annotations":{"a":"1"}},"mountPath":"/scratch","size":"5Gi","volumeName":"scratch"}]}`},
		{name: "named class", class: ptrTo("fast"),
			config: `{"genericEphemeralVolume":[{"accessModes":["ReadWriteOnce"],"storageClassName":"fast","mountPath":"/scratch","size":"5Gi","volumeName":"scratch"}]}`},
		{name: "no size", err: "positive quantity",
			config: `{"genericEphemeralVolume":[{"accessModes":["ReadWriteOnce"],"defaultStorageClass":true,"mountPath":"/scratch","volumeName":"scratch"}]}`},
		{name: "bad access mode", err: "access mode",
			config: `{"genericEphemeralVolume":[{"accessModes":["Shared"],"defaultStorageClass":true,"mountPath":"/scratch","size":"1Gi","volumeName":"scratch"}]}`},
		{name: "relative mount path", err: "not absolute",
			config: `{"genericEphemeralVolume":[{"accessModes":["ReadWriteOnce"],"defaultStorageClass":true,"mountPath":"path","size":"1Gi","volumeName":"scratch"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cfg kubernetesConfig
			require.NoError(t, json.Unmarshal([]byte(tc.config), &cfg))
			var ts tektonv1.TaskSpec
			var main tektonv1.Step
			err := platformEphemeral("comp", &cfg, &ts, &main)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, ts.Volumes, 1)
			tpl := ts.Volumes[0].Ephemeral.VolumeClaimTemplate
			assert.Equal(t, "5Gi", tpl.Spec.Resources.Requests.Storage().String())
			assert.Equal(t, tc.class, tpl.Spec.StorageClassName)
			assert.Equal(t, "/scratch", main.VolumeMounts[0].MountPath)
			assert.Equal(t, ts.Volumes[0].Name, main.VolumeMounts[0].Name)
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestEphemeralVolumeCompiles: the volume passes Tekton's validation.
func TestEphemeralVolumeCompiles(t *testing.T) {
	spec := load(t, "demo.yaml")
	spec.PlatformSpec = platformOf(`"exec-train":{"genericEphemeralVolume":[{"accessModes":["ReadWriteOnce"],"defaultStorageClass":true,"mountPath":"/scratch","size":"1Gi","volumeName":"scratch"}]}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	train := byName(p.Spec.Tasks)["train"]
	found := false
	for _, v := range train.TaskSpec.Volumes {
		found = found || v.Ephemeral != nil
	}
	assert.True(t, found)
}
