package kfpir

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// TestResourcesFromPipelineParameters: a resource given by a pipeline
// input is recorded on the Pipeline (the step keeps the constant ones),
// and the run's values become the task's stepSpecs, checked.
func TestResourcesFromPipelineParameters(t *testing.T) {
	p := compileValid(t, load(t, "resource_params.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	main := p.Spec.Tasks[0].TaskSpec.Steps[len(p.Spec.Tasks[0].TaskSpec.Steps)-1]
	assert.Equal(t, "2Gi", main.ComputeResources.Limits.Memory().String(), "a constant stays on the step")
	assert.Nil(t, main.ComputeResources.Requests, "the parameters' resources are the run's")
	var entries []ResourceParam
	require.NoError(t, json.Unmarshal([]byte(p.Annotations[contract.AnnotationResourceParams]), &entries))
	assert.ElementsMatch(t, []ResourceParam{
		{PipelineTaskName: "train", Step: MainStep, List: "limits", Name: "cpu", QuantityParam: "cpu"},
		{PipelineTaskName: "train", Step: MainStep, List: "requests", Name: "memory", QuantityParam: "mem"},
		{PipelineTaskName: "train", Step: MainStep, List: "limits", NameParam: "gpu_type", QuantityParam: "gpus"},
	}, entries)

	values := map[string]string{"cpu": "2", "mem": "3Gi", "gpus": "2", "gpu_type": "amd.com/gpu"}
	steps, err := RunResources(p.Annotations[contract.AnnotationResourceParams], values)
	require.NoError(t, err)
	require.Len(t, steps["train"], 1)
	got := steps["train"][0]
	assert.Equal(t, MainStep, got.Name)
	assert.True(t, resource.MustParse("2").Equal(got.ComputeResources.Limits["cpu"]))
	assert.True(t, resource.MustParse("2").Equal(got.ComputeResources.Limits["amd.com/gpu"]))
	assert.True(t, resource.MustParse("3Gi").Equal(got.ComputeResources.Requests["memory"]))

	for param, bad := range map[string]struct{ value, err string }{
		"cpu":      {"lots", `limits cpu from parameter cpu: "lots" is not a Kubernetes quantity`},
		"gpus":     {"two", `limits amd.com/gpu from parameter gpus: "two" is not a Kubernetes quantity`},
		"gpu_type": {"NVIDIA_TESLA_P4", `accelerator type from parameter gpu_type: "NVIDIA_TESLA_P4" is not a Kubernetes extended resource name`},
	} {
		v := map[string]string{"cpu": "2", "mem": "3Gi", "gpus": "2", "gpu_type": "amd.com/gpu"}
		v[param] = bad.value
		_, err := RunResources(p.Annotations[contract.AnnotationResourceParams], v)
		assert.ErrorContains(t, err, "task train: "+bad.err)
	}
	_, err = RunResources(p.Annotations[contract.AnnotationResourceParams], map[string]string{})
	assert.ErrorContains(t, err, "the run gives no value")
}
