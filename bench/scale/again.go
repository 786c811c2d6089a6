package main

import (
	"context"
	"fmt"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The direct phase again, after the operator's: the operator's Experiments
// and their runs stay where they are (deleting them would set the operator
// working, and a run it no longer finds may be made again), so it runs in a
// namespace of its own, holding copies of what the operation shape uses:
// the Provider's Tasks and its service account. Tekton's controller lists a
// run's TaskRuns and pods from its namespace's index, so the objects left
// in the bench's namespace do not slow it there.

// againNamespace is the namespace of the direct phase run again.
func (b *bench) againNamespace() string { return b.ns + "-again" }

// createAgainNamespace creates the namespace of the direct phase run again.
func (b *bench) createAgainNamespace(ctx context.Context) error {
	b.againNS = b.againNamespace()
	return b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.againNS, Labels: map[string]string{"scale-bench": "true"}}})
}

// copyForDirectAgain copies the Tasks shape's pipeline refers to and the
// service account it runs with from the bench's namespace into againNS,
// without their labels and owners, so that the operator does not take the
// copies for its own.
func (b *bench) copyForDirectAgain(ctx context.Context, shape *tektonv1.PipelineRun) error {
	if shape.Spec.PipelineSpec == nil {
		return fmt.Errorf("the operation shape has no embedded pipelineSpec")
	}
	var objects []client.Object
	copied := map[string]bool{} // a Task two pipeline tasks use is copied once
	pipelineTasks := append(append([]tektonv1.PipelineTask{}, shape.Spec.PipelineSpec.Tasks...), shape.Spec.PipelineSpec.Finally...)
	for _, t := range pipelineTasks {
		if t.TaskRef == nil || t.TaskRef.Name == "" || copied[t.TaskRef.Name] {
			continue
		}
		copied[t.TaskRef.Name] = true
		task := &tektonv1.Task{}
		if err := b.c.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: t.TaskRef.Name}, task); err != nil {
			return fmt.Errorf("the operation shape's Task %s: %w", t.TaskRef.Name, err)
		}
		objects = append(objects, &tektonv1.Task{ObjectMeta: metav1.ObjectMeta{Name: task.Name}, Spec: task.Spec})
	}
	if sa := shape.Spec.TaskRunTemplate.ServiceAccountName; sa != "" && sa != "default" {
		objects = append(objects, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}})
	}
	for _, o := range objects {
		o.SetNamespace(b.againNS)
		if err := b.c.Create(ctx, o); err != nil {
			return fmt.Errorf("copying %s into %s: %w", o.GetName(), b.againNS, err)
		}
	}
	return nil
}
