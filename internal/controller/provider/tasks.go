package provider

import (
	"context"
	"fmt"
	"sync"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks"
)

// FieldOwner is the server-side apply field manager of everything the
// operator applies.
const FieldOwner = "kfp-tekton-operator"

// taskApplier keeps the shared Tasks applied in workflow namespaces. It
// remembers the generation each Task had after its own last apply: a Task
// whose cached generation still matches needs no request, so a steady state
// costs no API calls, while an edit (new generation), a deletion or a
// removed label (gone from the label-filtered cache) is re-applied.
type taskApplier struct {
	client  client.Client
	version string
	desired []*unstructured.Unstructured // without namespace

	mu      sync.Mutex
	applied map[string]int64 // namespace/name -> generation after our apply
}

func newTaskApplier(c client.Client, version string) (*taskApplier, error) {
	all, err := tasks.All()
	if err != nil {
		return nil, err
	}
	desired := make([]*unstructured.Unstructured, 0, len(all))
	for _, t := range all {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(t)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: obj}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		u.SetAPIVersion(tektonv1.SchemeGroupVersion.String())
		u.SetKind("Task")
		annotations := u.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[contract.AnnotationOperatorVersion] = version
		u.SetAnnotations(annotations)
		desired = append(desired, u)
	}
	return &taskApplier{client: c, version: version, desired: desired, applied: map[string]int64{}}, nil
}

// names are the shared Tasks' names.
func (a *taskApplier) names() []string {
	names := make([]string, len(a.desired))
	for i, u := range a.desired {
		names[i] = u.GetName()
	}
	return names
}

// ensure applies every shared Task in namespace that is missing or changed
// since the operator last applied it, and the compiler account. It returns
// how many Tasks it applied.
func (a *taskApplier) ensure(ctx context.Context, namespace string) (int, error) {
	applied := 0
	for _, want := range a.desired {
		key := namespace + "/" + want.GetName()
		current := &tektonv1.Task{}
		err := a.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: want.GetName()}, current)
		switch {
		case err == nil:
			a.mu.Lock()
			gen, known := a.applied[key]
			a.mu.Unlock()
			if known && gen == current.Generation && current.Annotations[contract.AnnotationOperatorVersion] == a.version {
				continue
			}
		case !apierrors.IsNotFound(err):
			return applied, fmt.Errorf("reading Task %s: %w", key, err)
		}
		obj := want.DeepCopy()
		obj.SetNamespace(namespace)
		if err := a.client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return applied, fmt.Errorf("applying Task %s: %w", key, err)
		}
		a.mu.Lock()
		a.applied[key] = obj.GetGeneration()
		a.mu.Unlock()
		applied++
	}
	return applied, a.ensureCompilerAccount(ctx, namespace)
}

// remove deletes the shared Tasks and the compiler account from namespace.
func (a *taskApplier) remove(ctx context.Context, namespace string) error {
	err := a.client.DeleteAllOf(ctx, &tektonv1.Task{}, client.InNamespace(namespace),
		client.MatchingLabels{contract.LabelManagedBy: contract.ManagedByOperator})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting shared Tasks in %s: %w", namespace, err)
	}
	a.mu.Lock()
	for _, u := range a.desired {
		delete(a.applied, namespace+"/"+u.GetName())
	}
	a.mu.Unlock()
	return a.removeCompilerAccount(ctx, namespace)
}
