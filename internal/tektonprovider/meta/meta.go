// Package meta holds the labels and annotations the Tekton provider puts on
// what it creates: the provider writes them, the operator's completion
// controller reads them (without linking the compiler into the operator).
package meta

import (
	"fmt"
	"strings"
	"time"
)

// Labels on what the Tekton provider creates, so `kubectl get` and
// `tkn pr list -l …` find a resource's objects. Values longer than a label
// allows are shortened with a hash (naming.LabelValue); annotations keep
// them whole.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy marks the ML pipelines' Pipelines, PipelineRuns and
	// CronJobs; the operator watches PipelineRuns so marked for completion.
	ManagedBy = "kfp-tekton-provider"

	LabelNamespace        = "pipelines.kubeflow.org/namespace" // the resource's namespace
	LabelPipelineID       = "pipelines.kubeflow.org/pipeline-id"
	LabelPipeline         = "pipelines.kubeflow.org/pipeline"
	LabelPipelineVersion  = "pipelines.kubeflow.org/pipeline-version"
	LabelRun              = "pipelines.kubeflow.org/run"
	LabelRunUID           = "pipelines.kubeflow.org/run.uid"
	LabelRunSchedule      = "pipelines.kubeflow.org/runschedule"
	LabelRunScheduleUID   = "pipelines.kubeflow.org/runschedule.uid"
	LabelRunConfiguration = "pipelines.kubeflow.org/runconfiguration"
	// LabelRunConfigurationUID is the UID of the RunConfiguration that owns
	// the run's Run or RunSchedule.
	LabelRunConfigurationUID = "pipelines.kubeflow.org/runconfiguration.uid"
	LabelExperiment          = "pipelines.kubeflow.org/experiment"

	// AnnotationResource is "Kind namespace/name" of the resource an object
	// was made for, whole.
	AnnotationResource = "pipelines.kubeflow.org/resource"
	// AnnotationRunConfiguration is "namespace/name" of that RunConfiguration, whole.
	AnnotationRunConfiguration = "pipelines.kubeflow.org/runconfiguration"
	// AnnotationPipelineVersion is the pipeline version, whole.
	AnnotationPipelineVersion = "pipelines.kubeflow.org/pipeline-version"
	// AnnotationArtifactsDirectory on a compiled Pipeline is the directory
	// of the artifacts volume its pipeline root ends in: that of the
	// namespace the Pipeline resource belongs to, the only one its runs
	// mount.
	AnnotationArtifactsDirectory = "pipelines.kubeflow.org/artifacts-directory"
)

// AnnotationOutputs on a compiled Pipeline and on its PipelineRuns lists
// the pipeline's output artifacts as JSON ([]OutputArtifact).
const AnnotationOutputs = "pipelines.kubeflow.org/outputs"

// RunNamePlaceholder stands for the PipelineRun's name in an output's URI.
const RunNamePlaceholder = "$(context.pipelineRun.name)"

// OutputArtifact is one output artifact of a compiled pipeline.
type OutputArtifact struct {
	// Component is the KFP task that produces it.
	Component string `json:"component"`
	// Output is the artifact's key among the task's outputs.
	Output string `json:"output"`
	// URI is where a run stores it, with RunNamePlaceholder for the run.
	URI string `json:"uri"`
}

// ScheduledTime reads the scheduled time from the name the CronJob
// controller gives a Job: the CronJob's name, "-", and the scheduled time
// in minutes since the Unix epoch.
func ScheduledTime(jobName string) (time.Time, error) {
	i := strings.LastIndexByte(jobName, '-')
	var minutes int64
	if i < 0 {
		return time.Time{}, fmt.Errorf("job name %q has no scheduled time", jobName)
	}
	if _, err := fmt.Sscanf(jobName[i+1:], "%d", &minutes); err != nil || fmt.Sprint(minutes) != jobName[i+1:] {
		return time.Time{}, fmt.Errorf("job name %q does not end in the scheduled minute", jobName)
	}
	return time.Unix(minutes*60, 0).UTC(), nil
}
