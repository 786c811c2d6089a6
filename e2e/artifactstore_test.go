//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	endpoint := storeEndpoint(t)
	repo := fmt.Sprintf(`{"s3":{"bucket":%q,"keyPrefix":"e2e","endpoint":%q,"insecure":true,`+
		`"accessKeySecret":{"name":"s3-keys","key":"accessKey"},"secretKeySecret":{"name":"s3-keys","key":"secretKey"}}}`, storeBucket, endpoint)
	run(t, filepath.Join(root, "bin", "helm"), "install", "kfp", filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--namespace", ns, "-f", filepath.Join(root, "config", "provider", "values.yaml"),
		"--set", "provider.image="+images["TEKTON_PROVIDER_IMAGE"],
		"--set", "provider.frameworks[0].image="+images["STATIC_COMPILER_IMAGE"],
		"--set-json", "provider.artifactRepository="+repo)
	waitFor(t, 2*time.Minute, "Provider "+ns+"/kfp Ready", func() (bool, string) { return readyIs(get(t, "Provider", ns, "kfp"), "True") })
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	waitFor(t, 4*time.Minute, "Pipeline demo-ml synchronised", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "demo-ml")) })
	create(t, ns, "kind: Run\nmetadata: {name: s3}\nspec:\n  provider: kfp\n  pipeline: demo-ml\n")
	waitFor(t, 4*time.Minute, "Run s3 Succeeded", func() (bool, string) {
		state, msg := completionState(get(t, "Run", ns, "s3"))
		return state == "Succeeded", state + ": " + msg
	})
	pr := runPipelineRun(t, ns, "s3")
	assert.Empty(t, pr.Spec.Workspaces, "no volume holds the artifacts")
	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.Regexp(t, `\[evaluate : main\] accuracy 0\.\d{4}`, logs, "evaluate read the model and the dataset fetched from the store")
	assert.Contains(t, logs, "[train : store] kfp-task store: s3://"+storeBucket+"/e2e/"+ns+"/"+pr.Name+"/train/model")

	store, err := transfer.New(transfer.Config{Endpoint: endpoint, Insecure: true, AccessKey: access, SecretKey: secret})
	require.NoError(t, err)
	local := t.TempDir()
	for _, artifact := range []string{"generate/dataset", "train/model"} {
		o := objectstore.Object{Scheme: "s3", Bucket: storeBucket, Key: "e2e/" + ns + "/" + pr.Name + "/" + artifact}
		require.NoError(t, store.Fetch(context.Background(), o, filepath.Join(local, artifact)), "artifact %s in the store", artifact)
		info, err := os.Stat(filepath.Join(local, artifact))
		require.NoError(t, err)
		assert.Greater(t, info.Size(), int64(0), artifact)
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
