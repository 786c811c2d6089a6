package operator

import (
	"testing"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
)

func labelledTask(ns string) *tektonv1.Task {
	return &tektonv1.Task{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", UID: "u", ResourceVersion: "7", Generation: 3,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "kfp-tekton-operator"},
			Annotations: map[string]string{"filler": string(make([]byte, 100_000))}},
		Spec: tektonv1.TaskSpec{Steps: []tektonv1.Step{{Name: "s", Image: "busybox"}}},
	}
}

func TestObjectsOutsideServedNamespacesAreStubs(t *testing.T) {
	reader := client.Reader(fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(&pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"}}).Build())
	perProvider := &servedNamespaces{}
	perProvider.providers.Store(&reader)
	shared := &servedNamespaces{workflowNamespace: "workflows"}
	for _, c := range []struct {
		name   string
		served *servedNamespaces
		ns     string
		whole  bool
	}{
		{"a Provider's namespace", perProvider, "team-a", true},
		{"a namespace with no Provider", perProvider, "team-b", false},
		{"the shared workflow namespace", shared, "workflows", true},
		{"a Provider's namespace beside a shared workflow namespace", shared, "team-a", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.served.transform(slimTask)(labelledTask(c.ns))
			if err != nil {
				t.Fatal(err)
			}
			task := got.(*tektonv1.Task)
			if task.Name != "t" || task.Namespace != c.ns || task.UID != "u" || task.ResourceVersion != "7" {
				t.Errorf("the informer's key or version is lost: %+v", task.ObjectMeta)
			}
			if len(task.Spec.Steps) != 0 {
				t.Error("a cached Task keeps its steps")
			}
			if kept := task.Labels != nil && task.Generation == 3; kept != c.whole {
				t.Errorf("metadata kept = %v, want %v", kept, c.whole)
			}
			if !c.whole && len(task.Annotations) != 0 {
				t.Error("a stub keeps a tenant's annotations")
			}
		})
	}
}

func TestUnwiredScopeKeepsEverything(t *testing.T) {
	got, _ := (&servedNamespaces{}).transform(slimDeployment)(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-b", Name: "d", Labels: map[string]string{"a": "b"}}})
	if got.(*appsv1.Deployment).Labels["a"] != "b" {
		t.Error("before the cache is wired, objects were stubbed")
	}
}
