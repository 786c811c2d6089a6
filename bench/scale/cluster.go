package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cluster the bench runs on: kwok's fake node, and Tekton's controller
// tuned for the run.

// startFakeNode runs kwok for one fake node and waits for it to be Ready.
func (b *bench) startFakeNode(ctx context.Context, root string) (func(), error) {
	// The node is the bench's: its end deletes it. One already there is
	// another bench's (still cleaning up, perhaps), whose end would take
	// this one's node away mid-run and send its pods to the real node.
	switch err := b.c.Get(ctx, client.ObjectKey{Name: fakeNode}, &corev1.Node{}); {
	case err == nil:
		return nil, fmt.Errorf("node %s exists: another bench/scale is running; wait for it to end (or, if none runs, kubectl delete node %s)", fakeNode, fakeNode)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	dir, err := os.MkdirTemp("", "scale-bench")
	if err != nil {
		return nil, err
	}
	stages := filepath.Join(dir, "stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "kwok.log"))
	if err != nil {
		return nil, err
	}
	kwok := exec.Command(filepath.Join(root, "bin", "kwok"), "--kubeconfig", filepath.Join(root, "bin", "kubeconfig"),
		"--config", stages, "--manage-nodes-with-label-selector", fakeNodeLabel+"=true",
		"--cidr", "10.244.0.1/16", "--node-lease-duration-seconds", "40")
	kwok.Stdout, kwok.Stderr = logFile, logFile
	kwok.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // gone with the bench, however it ends
	if err := kwok.Start(); err != nil {
		return nil, fmt.Errorf("kwok (hack/build-cluster.sh builds bin/kwok): %w", err)
	}
	stop := func() {
		_ = b.c.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fakeNode}})
		_ = kwok.Process.Signal(syscall.SIGTERM)
		_ = kwok.Wait()
		_ = logFile.Close()
		_ = os.RemoveAll(dir)
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"), corev1.ResourcePods: resource.MustParse("100000")}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: fakeNode, Labels: map[string]string{fakeNodeLabel: "true", "kubernetes.io/hostname": fakeNode}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: fakeNodeLabel, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if err := b.c.Create(ctx, node); err != nil {
		stop()
		return nil, err
	}
	err = b.waitFor(ctx, 2*time.Minute, "the fake node Ready", func() (bool, error) {
		got := &corev1.Node{}
		if err := b.c.Get(ctx, client.ObjectKey{Name: fakeNode}, got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		logs, _ := os.ReadFile(logFile.Name())
		stop()
		return nil, fmt.Errorf("%w; kwok: %s", err, tail(logs, 2000))
	}
	return stop, nil
}

// tektonTuning is Tekton's controller's own performance settings
// (-kube-api-qps, -kube-api-burst, -threads-per-controller).
type tektonTuning struct{ qps, threads int }

func (t tektonTuning) String() string {
	if t == (tektonTuning{}) {
		return "as installed"
	}
	return fmt.Sprintf("-kube-api-qps %d -kube-api-burst %d -threads-per-controller %d", t.qps, 2*t.qps, t.threads)
}

// tuneTekton restarts Tekton's controller with t's settings and returns
// what restarts it as it was.
func (b *bench) tuneTekton(ctx context.Context, t tektonTuning) (func(), error) {
	if t == (tektonTuning{}) {
		return func() {}, nil
	}
	deploy := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: tektonNamespace, Name: "tekton-pipelines-controller"}
	if err := b.c.Get(ctx, key, deploy); err != nil {
		return nil, err
	}
	original := slices.Clone(deploy.Spec.Template.Spec.Containers[0].Args)
	setArgs := func(ctx context.Context, args []string) error {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := b.c.Get(ctx, key, deploy); err != nil {
				return err
			}
			deploy.Spec.Template.Spec.Containers[0].Args = args
			return b.c.Update(ctx, deploy)
		}); err != nil {
			return err
		}
		return b.waitFor(ctx, 3*time.Minute, "Tekton's controller restarted", func() (bool, error) {
			if err := b.c.Get(ctx, key, deploy); err != nil {
				return false, err
			}
			s := deploy.Status
			if s.ObservedGeneration != deploy.Generation || s.UpdatedReplicas != *deploy.Spec.Replicas ||
				s.AvailableReplicas != *deploy.Spec.Replicas || s.Replicas != *deploy.Spec.Replicas {
				return false, nil
			}
			// The old pod gone too, so its process is not mistaken for the new one.
			pods := &corev1.PodList{}
			err := b.c.List(ctx, pods, client.InNamespace(tektonNamespace), client.MatchingLabels(deploy.Spec.Selector.MatchLabels))
			return err == nil && len(pods.Items) == int(*deploy.Spec.Replicas), err
		})
	}
	args := slices.Clone(original)
	if t.qps > 0 {
		args = append(args, "-kube-api-qps", strconv.Itoa(t.qps), "-kube-api-burst", strconv.Itoa(2*t.qps))
	}
	if t.threads > 0 {
		args = append(args, "-threads-per-controller", strconv.Itoa(t.threads))
	}
	if err := setArgs(ctx, args); err != nil {
		return nil, err
	}
	return func() {
		if err := setArgs(context.Background(), original); err != nil {
			fmt.Fprintln(os.Stderr, "scale-bench: restoring Tekton's controller:", err)
		}
	}, nil
}
