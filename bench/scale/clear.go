package main

import (
	"context"
	"fmt"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clearDirect deletes the direct phase's PipelineRuns and waits until they,
// their TaskRuns and their pods (which carry the run's labels) are gone, so
// the operator phase starts from the state the direct phase started from.
// Left in place, they doubled what Tekton's controller holds in the
// namespace: its reconcilers list a run's TaskRuns and pods by label from
// the namespace's cache, so every reconcile of the operator phase also went
// over the direct phase's objects.
func (b *bench) clearDirect(ctx context.Context) error {
	start := time.Now()
	if err := b.c.DeleteAllOf(ctx, &tektonv1.PipelineRun{}, client.InNamespace(b.ns),
		client.MatchingLabels{benchLabel: "true"}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return fmt.Errorf("deleting the direct PipelineRuns: %w", err)
	}
	err := b.waitGone(ctx, "the direct phase's runs and pods", []client.ObjectList{&tektonv1.PipelineRunList{}, &tektonv1.TaskRunList{}, &corev1.PodList{}},
		client.InNamespace(b.ns), client.MatchingLabels{benchLabel: "true"})
	if err == nil {
		fmt.Printf("direct: its PipelineRuns, TaskRuns and pods deleted in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// clearOperatorPods deletes the pods of the operator phase's TaskRuns and
// waits until they are gone, before the direct phase runs again. Their
// runs stay (the operator keeps the newest of each resource as its record);
// a finished TaskRun does not need its pod. Left in place, they doubled the
// pods on the fake node, and the second direct phase ran at half the speed
// of the first, with kwok using eight times the CPU and kube-apiserver
// sending six times the pod watch events (2026-12-08, 1,000).
func (b *bench) clearOperatorPods(ctx context.Context) error {
	start := time.Now()
	selector := client.HasLabels{taskRunPodLabel}
	if err := b.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(b.ns), selector); err != nil {
		return fmt.Errorf("deleting the operator phase's pods: %w", err)
	}
	err := b.waitGone(ctx, "the operator phase's pods", []client.ObjectList{&corev1.PodList{}}, client.InNamespace(b.ns), selector)
	if err == nil {
		fmt.Printf("operator: its TaskRuns' pods deleted in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// waitGone waits until each of lists, listed with opts, is empty: what was
// deleted is gone.
func (b *bench) waitGone(ctx context.Context, what string, lists []client.ObjectList, opts ...client.ListOption) error {
	opts = append(opts, client.Limit(1))
	return b.waitFor(ctx, b.limit, what+" to be deleted", func() (bool, error) {
		for _, list := range lists {
			if err := b.c.List(ctx, list, opts...); err != nil {
				return false, err
			}
			if meta.LenList(list) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
}
