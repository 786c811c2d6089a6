package lifecycle

import (
	"testing"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// TestOnlyRunsWhereTheProviderRunsCount: a run anyone labels as an
// operation of team-a/kfp in their own namespace takes none of its room.
func TestOnlyRunsWhereTheProviderRunsCount(t *testing.T) {
	operation := func(namespace string) *tektonv1.PipelineRun {
		return &tektonv1.PipelineRun{ObjectMeta: metav1.ObjectMeta{
			Namespace:   namespace,
			Name:        "run",
			Labels:      map[string]string{contract.LabelManagedBy: contract.ManagedByOperator, contract.LabelOperation: string(contract.OperationCreate)},
			Annotations: map[string]string{contract.AnnotationProvider: "team-a/kfp"},
		}}
	}
	unlabelled := operation("team-a")
	delete(unlabelled.Labels, contract.LabelOperation)
	for _, c := range []struct {
		name              string
		run               *tektonv1.PipelineRun
		workflowNamespace string
		want              bool
	}{
		{"in the Provider's namespace", operation("team-a"), "", true},
		{"in a tenant's namespace, naming the Provider", operation("team-b"), "", false},
		{"in the shared workflow namespace", operation("workflows"), "workflows", true},
		{"in the Provider's namespace, with a shared workflow namespace", operation("team-a"), "workflows", false},
		{"not an operation", unlabelled, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := countsForItsProvider(c.run, c.workflowNamespace); got != c.want {
				t.Errorf("countsForItsProvider = %v, want %v", got, c.want)
			}
		})
	}
}
