package experiment_test

// The Experiment kind, run with the whole operator against a real API server.

import (
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

// A experiment through create, update and delete, each operation a PipelineRun of
// its own shared Task that Tekton would accept.
func TestCreateUpdateDelete(t *testing.T) {
	f := fixture.Setup(t, cp)
	f.CreateUpdateDelete(t, "experiment", &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "k-experiment"},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "one"}}, func(o lifecycle.Subject) { o.(*pipelinesv1beta1.Experiment).Spec.Description = "two" })
}
