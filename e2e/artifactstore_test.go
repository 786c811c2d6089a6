//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore/transfer"
)

// The local cluster's S3 store (hack/artifact-store.sh).
const (
	storeNamespace = "kfp-artifact-store"
	storeBucket    = "kfp-artifacts"
)

// storeKeys copies the store's keys into ns, as a platform team gives a
// Provider's namespace its store's credentials, and returns them.
func storeKeys(t *testing.T, ns string) (access, secret string) {
	t.Helper()
	var keys corev1.Secret
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: storeNamespace, Name: "s3-keys"}, &keys))
	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-keys", Namespace: ns}, Data: keys.Data}
	require.NoError(t, cl.Create(context.Background(), copied))
	return string(keys.Data["accessKey"]), string(keys.Data["secretKey"])
}

// storeEndpoint is the store's Service address: the local cluster runs
// no cluster DNS, so steps and the test reach it by its cluster IP.
func storeEndpoint(t *testing.T) string {
	t.Helper()
	var svc corev1.Service
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: storeNamespace, Name: "seaweedfs"}, &svc))
	return svc.Spec.ClusterIP + ":8333"
}

// TestArtifactsRoundTripThroughTheLocalS3Store runs the demo pipeline
// with the Provider's artifact repository in the local SeaweedFS store:
// the dataset and model go through S3 (no volume is bound to the run),
// only the fetch and store steps hold the keys, and the objects are in
// the namespace's own prefix of the bucket.
func TestArtifactsRoundTripThroughTheLocalS3Store(t *testing.T) {
	ns := namespace(t, "e2e-s3")
	access, secret := storeKeys(t, ns)
	// The claim holds KFP's cache only: the artifacts are in the store.
	dir := strings.TrimSpace(run(t, filepath.Join(root, "hack", "local-volume.sh"), ns, "kfp-artifacts"))
	t.Cleanup(func() {
		if !t.Failed() {
			_ = cl.Delete(context.Background(), &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local-" + ns + "-kfp-artifacts"}})
			_ = os.RemoveAll(dir)
		}
	})
	endpoint := storeEndpoint(t)
	repo := fmt.Sprintf(`{"s3":{"bucket":%q,"keyPrefix":"e2e","endpoint":%q,"insecure":true,`+
		`"accessKeySecret":{"name":"s3-keys","key":"accessKey"},"secretKeySecret":{"name":"s3-keys","key":"secretKey"}}}`, storeBucket, endpoint)
	run(t, filepath.Join(root, "bin", "helm"), "install", "kfp", filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--namespace", ns, "-f", filepath.Join(root, "config", "provider", "values.yaml"),
		"--set", "provider.image="+images["TEKTON_PROVIDER_IMAGE"],
		"--set", "provider.frameworks[0].image="+images["STATIC_COMPILER_IMAGE"],
		"--set-json", "provider.artifactRepository="+repo)
	waitFor(t, 2*time.Minute, "Provider "+ns+"/kfp Ready", func() (bool, string) { return readyIs(get(t, "Provider", ns, "kfp"), "True") })
	syncedDemoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	runs := map[string]tektonv1.PipelineRun{}
	for _, name := range []string{"s3", "s3-again"} {
		create(t, ns, "kind: Run\nmetadata: {name: "+name+"}\nspec:\n  provider: kfp\n  pipeline: demo-ml\n")
		waitRunState(t, 4*time.Minute, ns, name, "Succeeded")
		runs[name] = runPipelineRun(t, ns, name)
	}
	pr := runs["s3"]
	for _, w := range pr.Spec.Workspaces {
		assert.NotNil(t, w.PersistentVolumeClaim, "only the cache's claim is bound, no per-run volume")
	}
	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.Regexp(t, `\[evaluate : main\] accuracy 0\.\d{4}`, logs, "evaluate read the model and the dataset fetched from the store")
	assert.Contains(t, logs, "[train : store] kfp-task store: s3://"+storeBucket+"/e2e/"+ns+"/"+pr.Name+"/train/model")

	// The second run is cached, its outputs restored from the cache and
	// stored as its own: both runs' artifacts are in the store, equal.
	again := runs["s3-again"]
	for _, ref := range again.Status.ChildReferences {
		var tr tektonv1.TaskRun
		require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ref.Name}, &tr))
		for _, r := range tr.Status.Results {
			if r.Name == "kfp-cached" {
				assert.Equal(t, "true", r.Value.StringVal, "task %s of the second run", ref.PipelineTaskName)
			}
		}
	}
	store, err := transfer.New(transfer.Config{Endpoint: endpoint, Insecure: true, AccessKey: access, SecretKey: secret})
	require.NoError(t, err)
	local := t.TempDir()
	for _, artifact := range []string{"generate/dataset", "train/model"} {
		var contents []string
		for _, r := range []tektonv1.PipelineRun{pr, again} {
			o := objectstore.Object{Scheme: "s3", Bucket: storeBucket, Key: "e2e/" + ns + "/" + r.Name + "/" + artifact}
			at := filepath.Join(local, r.Name, artifact)
			require.NoError(t, store.Fetch(context.Background(), o, at), "artifact %s of %s in the store", artifact, r.Name)
			contents = append(contents, treeText(t, at))
		}
		assert.NotEmpty(t, contents[0], artifact)
		assert.Equal(t, contents[0], contents[1], "%s: the cached run's artifact is the first run's", artifact)
	}
	// Only the steps moving artifacts are given the keys.
	for _, p := range podsOf(t, ns, pr.Name) {
		for _, c := range p.Spec.Containers {
			keyed := false
			for _, e := range c.Env {
				keyed = keyed || e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "s3-keys"
			}
			moves := strings.HasSuffix(c.Name, "-fetch") || strings.HasSuffix(c.Name, "-store")
			assert.Equal(t, moves, keyed, "pod %s container %s", p.Name, c.Name)
		}
	}
}

// treeText is the content of a file, or of every file under a directory.
func treeText(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(strings.TrimPrefix(p, path) + ":" + string(data) + "\n")
		return err
	}))
	return b.String()
}
