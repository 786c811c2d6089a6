package completion

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

const outputs = `[{"component":"generate","output":"dataset","uri":"file:///kfp/artifacts/$(context.pipelineRun.name)/generate/dataset"},` +
	`{"component":"train","output":"model","uri":"file:///kfp/artifacts/$(context.pipelineRun.name)/train/model"}]`

func TestLatestSucceeded(t *testing.T) {
	components, err := Components(outputs, "run-7")
	require.NoError(t, err)
	wanted := []pipelinesv1beta1.OutputArtifact{{Name: "model", Path: "train:model:0"}, {Name: "blessed", Path: "train:model:0[blessed == true]"},
		{Name: "nothing", Path: "evaluate:report:0"}}
	t0 := metav1.NewTime(time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC))
	later := metav1.NewTime(t0.Add(time.Minute))

	next, missing := LatestSucceeded(nil, "run-7", t0, components, wanted)
	require.NotNil(t, next, "first sight")
	assert.Equal(t, []pipelinesv1beta1.Artifact{{Name: "model", Location: "file:///kfp/artifacts/run-7/train/model"}}, next.Artifacts)
	assert.Equal(t, []string{"blessed", "nothing"}, missing, "no metadata to match; no such component")

	again, _ := LatestSucceeded(next, "run-7", later, components, wanted)
	assert.Nil(t, again, "the same run again")
	older, _ := LatestSucceeded(&pipelinesv1beta1.RunReference{ProviderID: "run-8", CompletedAt: &later}, "run-7", t0, components, wanted)
	assert.Nil(t, older, "an earlier run ending late in the watch does not replace a later one")
	sameSecond, _ := LatestSucceeded(next, "run-6", t0, components, wanted)
	assert.Nil(t, sameSecond, "same second, smaller id: not later")
	tie, _ := LatestSucceeded(next, "run-8", t0, components, wanted)
	assert.NotNil(t, tie, "same second, greater id: later")
	newer, _ := LatestSucceeded(next, "run-9", later, components, wanted)
	require.NotNil(t, newer)
	assert.Equal(t, "run-9", newer.ProviderID)

	_, err = Components("{not json", "r")
	assert.Error(t, err)
}
