package tektonprovider

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// TestPVCTasksRunAsThePVCAccount: the CreatePVC and DeletePVC tasks, and
// only they, run as pvcServiceAccount; without one the run is refused.
func TestPVCTasksRunAsThePVCAccount(t *testing.T) {
	ir, err := os.ReadFile("../kfpir/testdata/pvc_create_mount_delete.yaml")
	require.NoError(t, err)
	p, err := PipelineFor(ir, pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	require.Contains(t, p.Annotations, contract.AnnotationPVCTasks)

	settings, err := SettingsFrom(config(map[string]string{ParamPipelineServiceAccount: `"kfp-pipeline-runner"`, ParamPVCServiceAccount: `"kfp-pvc-manager"`}))
	require.NoError(t, err)
	in := RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Spec: pipelinesv1beta1.RunSpec{}, Settings: settings}
	pr, err := PipelineRunFor(in)
	require.NoError(t, err)
	accounts := map[string]string{}
	for _, s := range pr.Spec.TaskRunSpecs {
		accounts[s.PipelineTaskName] = s.ServiceAccountName
	}
	assert.Equal(t, map[string]string{"createpvc": "kfp-pvc-manager", "deletepvc": "kfp-pvc-manager"}, accounts)
	assert.Equal(t, "kfp-pipeline-runner", pr.Spec.TaskRunTemplate.ServiceAccountName, "every other task")
	if fe := pr.Validate(context.Background()); fe != nil {
		t.Fatalf("Tekton's validation of the PipelineRun: %v", fe)
	}

	in.Settings.PVCServiceAccount = ""
	_, err = PipelineRunFor(in)
	assert.ErrorContains(t, err, "provider parameter pvcServiceAccount")
	assert.ErrorContains(t, err, "createpvc, deletepvc")
}
