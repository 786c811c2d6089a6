package kfpir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func s3Options() Options {
	key := func(k string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "store-keys"}, Key: k}
	}
	return Options{Name: "demo", LauncherImage: launcherImage,
		PipelineRoot: "s3://artifacts/kfp/team-a",
		ObjectStore:  &ObjectStore{Endpoint: "store.kfp:8333", Region: "us-east-1", Insecure: true, AccessKey: key("id"), SecretKey: key("secret")}}
}

// With an object-store root, artifacts move through the store: fetch
// before the component and store after it, with the credentials only in
// those two steps, and no volume bound to the run.
func TestAnObjectStoreRootMovesArtifactsThroughTheStore(t *testing.T) {
	p := compileValid(t, load(t, "demo.yaml"), s3Options())
	assert.Empty(t, p.Spec.Workspaces, "no volume holds the root")
	gen, train := taskByName(t, p, "generate"), taskByName(t, p, "train")
	var names []string
	for _, s := range train.TaskSpec.Steps {
		names = append(names, s.Name)
	}
	assert.Equal(t, FetchStep, names[0])
	assert.Equal(t, StoreStep, names[len(names)-1])
	assert.Contains(t, names, MainStep)
	assert.Empty(t, train.Workspaces)

	fetch, store := step(t, train, FetchStep), step(t, train, StoreStep)
	assert.Equal(t, []string{"fetch", "--root", "s3://artifacts/kfp/team-a", "--endpoint", "store.kfp:8333", "--region", "us-east-1", "--insecure",
		"--mkdir", "/s3/artifacts/kfp/team-a/$(context.pipelineRun.name)/train", "--",
		"s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/generate/dataset"}, fetch.Args)
	assert.Equal(t, "s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/train/model", store.Args[len(store.Args)-1])
	for _, s := range []string{FetchStep, StoreStep} {
		env := step(t, train, s).Env
		require.Len(t, env, 2)
		assert.Equal(t, "store-keys", env[0].ValueFrom.SecretKeyRef.Name)
	}
	main := step(t, train, MainStep)
	for _, e := range main.Env {
		assert.Nil(t, e.ValueFrom, "the component never sees the store's credentials")
	}
	assert.Equal(t, launchedBinary, main.Command[0], "launched: the launcher makes the outputs readable for the store step")
	assert.Contains(t, main.Args, "dataset=s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/generate/dataset", "the input by its URI (KFP's local path)")
	assert.Contains(t, main.Args, "s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/train")
	for _, s := range train.TaskSpec.Steps {
		require.NotEmpty(t, s.VolumeMounts, s.Name)
		assert.Equal(t, corev1.VolumeMount{Name: ObjectsVolume, MountPath: "/s3/artifacts/kfp/team-a"}, s.VolumeMounts[len(s.VolumeMounts)-1], s.Name)
	}
	// generate takes no artifact: its fetch step only makes its directory.
	assert.NotContains(t, step(t, gen, FetchStep).Args, "s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/generate/dataset")
	assert.Contains(t, p.Annotations[contract.AnnotationCaching], "off:", "no volume outlives the run")
}

// With a volume that outlives the run (Options.Caching), the tasks that
// cache mount it for the cache alone; artifacts still go through the
// store (a hit restores the outputs locally, and the store step uploads
// them).
func TestAnObjectStoreRootCachesOnTheVolume(t *testing.T) {
	opts := s3Options()
	opts.Caching = true
	p := compileValid(t, load(t, "demo.yaml"), opts)
	require.Len(t, p.Spec.Workspaces, 1)
	assert.Equal(t, ArtifactsWorkspace, p.Spec.Workspaces[0].Name)
	assert.Contains(t, p.Annotations[contract.AnnotationCaching], "on:")
	train := taskByName(t, p, "train")
	require.Len(t, train.TaskSpec.Workspaces, 1)
	assert.Equal(t, CacheMount, train.TaskSpec.Workspaces[0].MountPath)
	assert.Equal(t, ArtifactsWorkspace, train.Workspaces[0].Workspace)
	main := step(t, train, MainStep)
	assert.Contains(t, main.Args, "/kfp-cache/.kfp-cache")
	assert.Contains(t, main.Args, "dataset=s3://artifacts/kfp/team-a/$(context.pipelineRun.name)/generate/dataset")
	assert.Equal(t, StoreStep, train.TaskSpec.Steps[len(train.TaskSpec.Steps)-1].Name)
}

func TestPythonFunctionComponentsUseTheStore(t *testing.T) {
	p := compileValid(t, load(t, "python_function.yaml"), s3Options())
	for _, pt := range p.Spec.Tasks {
		for _, s := range pt.TaskSpec.Steps {
			if s.Name == MainStep {
				for _, a := range s.Args {
					assert.NotContains(t, a, "workspaces.", "task %s", pt.Name)
				}
			}
		}
	}
}

func TestObjectStoreRootRefusals(t *testing.T) {
	for root, want := range map[string]string{
		"s3://artifacts/kfp":       "needs the store's endpoint and credentials",
		"gs://artifacts/kfp":       "supported roots: file:///absolute/path",
		"s3://artifacts/kfp/../x":  "needs the store's endpoint",
		"minio://artifacts/kfp/ok": "needs the store's endpoint",
	} {
		_, err := Compile(load(t, "demo.yaml"), Options{Name: "demo", LauncherImage: launcherImage, PipelineRoot: root})
		require.Error(t, err, root)
		assert.Contains(t, err.Error(), want, root)
	}
	opts := s3Options()
	opts.PipelineRoot = "s3://artifacts/kfp/../x"
	_, err := Compile(load(t, "demo.yaml"), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `may not contain ".."`)
}
