package testenv_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

// A PipelineRun with an embedded pipelineSpec and generateName round-trips:
// Tekton's v1 CRDs are installed and serve their schema.
func TestTektonPipelineRunWithEmbeddedSpec(t *testing.T) {
	ctx := context.Background()
	pr := &tektonv1.PipelineRun{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "embedded-", Namespace: "default"},
		Spec: tektonv1.PipelineRunSpec{
			Params: tektonv1.Params{{Name: "who", Value: *tektonv1.NewStructuredValues("world")}},
			PipelineSpec: &tektonv1.PipelineSpec{
				Params: tektonv1.ParamSpecs{{Name: "who", Type: tektonv1.ParamTypeString}},
				Tasks: []tektonv1.PipelineTask{{
					Name:    "greet",
					TaskRef: &tektonv1.TaskRef{Name: "greeter"},
					Params:  tektonv1.Params{{Name: "who", Value: *tektonv1.NewStructuredValues("$(params.who)")}},
				}},
			},
		},
	}
	require.NoError(t, cp.Client.Create(ctx, pr))
	assert.NotEmpty(t, pr.Name)

	got := &tektonv1.PipelineRun{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(pr), got))
	require.NotNil(t, got.Spec.PipelineSpec)
	assert.Equal(t, "greeter", got.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	assert.Equal(t, "world", got.Spec.Params[0].Value.StringVal)
}

func TestAdminKubeconfigReachesTheAPIServer(t *testing.T) {
	kubeconfig, err := cp.AdminKubeconfig()
	require.NoError(t, err)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	require.NoError(t, err)
	admin, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	require.NoError(t, err)

	// Cluster-admin can list what the CRDs serve in every namespace.
	require.NoError(t, admin.List(context.Background(), &tektonv1.PipelineRunList{}))
	require.NoError(t, admin.List(context.Background(), &pipelinesv1beta1.ProviderList{}))
}
