package operator

import (
	"context"
	"sync/atomic"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// servedNamespaces says which namespaces hold what the operator manages:
// the shared workflow namespace, or else every namespace with a Provider.
// The cache selects Tasks, Deployments and PipelineRuns by label, and a
// label is anyone's to set in their own namespace: objects elsewhere are
// kept as stubs (name, namespace, UID and resource version only), so a
// tenant's labelled objects cost the operator almost no memory and, having
// no labels left, match no index or watch mapping.
type servedNamespaces struct {
	workflowNamespace string
	// providers reads Providers from the manager's cache; set once the
	// manager exists, before its informers start.
	providers atomic.Pointer[client.Reader]
}

// serves: ns may hold objects the operator manages. Until the cache is
// wired, everything is served (nothing is lost, only not slimmed).
func (s *servedNamespaces) serves(ns string) bool {
	if s.workflowNamespace != "" {
		return ns == s.workflowNamespace
	}
	reader := s.providers.Load()
	if reader == nil {
		return true
	}
	// The Provider informer's store is written before any handler runs, so
	// a Provider the operator acted on (making its Tasks and runs) is
	// already there. A failed read keeps the object whole.
	var list pipelinesv1beta1.ProviderList
	if err := (*reader).List(context.Background(), &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return true
	}
	return len(list.Items) > 0
}

// transform slims an object for the cache: a stub outside the served
// namespaces, else keep as it is.
func (s *servedNamespaces) transform(keep toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if o, ok := obj.(client.Object); ok && !s.serves(o.GetNamespace()) {
			return stub(o), nil
		}
		return keep(obj)
	}
}

// stub is obj with nothing but what the informer needs to track it.
func stub(obj client.Object) any {
	meta := metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion()}
	switch obj.(type) {
	case *tektonv1.PipelineRun:
		return &tektonv1.PipelineRun{ObjectMeta: meta}
	case *tektonv1.Task:
		return &tektonv1.Task{ObjectMeta: meta}
	case *appsv1.Deployment:
		return &appsv1.Deployment{ObjectMeta: meta}
	}
	return obj
}

// slimTask keeps what the Provider controller reads of its Tasks: their
// metadata (generation, the operator-version annotation), not their steps.
func slimTask(obj any) (any, error) {
	if t, ok := obj.(*tektonv1.Task); ok {
		t.ManagedFields = nil
		t.Spec = tektonv1.TaskSpec{}
	}
	return obj, nil
}

// slimDeployment keeps a provider service Deployment's metadata and status:
// the Provider controller reads whether it exists and whose it is.
func slimDeployment(obj any) (any, error) {
	if d, ok := obj.(*appsv1.Deployment); ok {
		d.ManagedFields = nil
		d.Spec = appsv1.DeploymentSpec{}
	}
	return obj, nil
}
