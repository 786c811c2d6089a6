//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAPVCThePipelineCreatesIsMountedAndDeleted runs a pipeline as
// kfp-kubernetes compiles CreatePVC, mount_pvc of its output and DeletePVC
// (internal/testfixtures/kfpexecutor/pvc.yaml): the create and delete
// tasks run as the chart's kfp-pvc-manager and no other task does, the
// claim is named after the run with the suffix, the consuming task has it
// mounted at /data (its result is that line of its mountinfo), the delete
// task deletes the claim, which goes with the run's pods.
func TestAPVCThePipelineCreatesIsMountedAndDeleted(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2-pvc")
	tektonProvider(t, ns)
	syncedDemoPipeline(t, ns, "pvc", "/pvc.yaml")
	create(t, ns, "kind: Run\nmetadata: {name: scratch}\nspec:\n  provider: kfp\n  pipeline: pvc\n")
	waitRunState(t, 5*time.Minute, ns, "scratch", "Succeeded")
	pr := runPipelineRun(t, ns, "scratch")
	claim := pr.Name + "-scratch"
	require.Len(t, pr.Status.Results, 1)
	assert.Contains(t, pr.Status.Results[0].Value.StringVal, " /data ", "the claim is mounted at /data")

	accounts := map[string]string{}
	for _, ref := range pr.Status.ChildReferences {
		var tr tektonv1.TaskRun
		require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ref.Name}, &tr))
		accounts[ref.PipelineTaskName] = tr.Spec.ServiceAccountName
		switch ref.PipelineTaskName {
		case "createpvc":
			require.Len(t, tr.Status.Results, 1)
			assert.Equal(t, claim, strings.TrimSpace(tr.Status.Results[0].Value.StringVal))
		case "look":
			var pod corev1.Pod
			require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tr.Status.PodName}, &pod))
			claims := []string{}
			for _, v := range pod.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					claims = append(claims, v.PersistentVolumeClaim.ClaimName)
				}
			}
			assert.Contains(t, claims, claim, "Tekton put the create task's result in the volume")
		}
	}
	assert.Equal(t, map[string]string{"createpvc": "kfp-pvc-manager", "look": "kfp-pipeline-runner", "deletepvc": "kfp-pvc-manager"}, accounts)

	// The delete task asks for the claim's deletion; Kubernetes keeps it
	// (pvc-protection) while a pod that mounted it exists, finished or
	// not: as in KFP, it goes with the run's pods.
	waitFor(t, 2*time.Minute, "claim "+claim+" being deleted", func() (bool, string) {
		var pvc corev1.PersistentVolumeClaim
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: claim}, &pvc)
		if apierrors.IsNotFound(err) || pvc.DeletionTimestamp != nil {
			return true, ""
		}
		return false, "not deleted: " + pvc.Labels["pipelines.kubeflow.org/pvc-owner"]
	})
	run := strings.TrimSuffix(claim, "-scratch")
	require.NoError(t, client.IgnoreNotFound(cl.Delete(context.Background(),
		&tektonv1.PipelineRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run}}, client.PropagationPolicy(metav1.DeletePropagationBackground))))
	waitFor(t, 3*time.Minute, "claim "+claim+" gone with the run's pods", func() (bool, string) {
		var pvc corev1.PersistentVolumeClaim
		err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: claim}, &pvc)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
