package contract

// The Tekton provider's vocabulary: what it puts on the Pipelines,
// PipelineRuns and CronJobs it makes, and the operator's completion
// controller reads (without linking the compiler into the operator). The
// compiler (internal/kfpir) writes the annotations on a compiled Pipeline
// the Tekton provider reads.

// Labels on what the Tekton provider creates, so `kubectl get` and
// `tkn pr list -l …` find a resource's objects. Values longer than a label
// allows are shortened with a hash (naming.LabelValue); annotations keep
// them whole. The provider also sets LabelManagedBy to
// ManagedByTektonProvider.
const (
	LabelNamespace       = "pipelines.kubeflow.org/namespace" // the resource's namespace
	LabelPipelineID      = "pipelines.kubeflow.org/pipeline-id"
	LabelPipeline        = "pipelines.kubeflow.org/pipeline"
	LabelPipelineVersion = "pipelines.kubeflow.org/pipeline-version"
	LabelRun             = "pipelines.kubeflow.org/run"
	LabelRunUID          = "pipelines.kubeflow.org/run.uid"
	LabelRunSchedule     = "pipelines.kubeflow.org/runschedule"
	LabelRunScheduleUID  = "pipelines.kubeflow.org/runschedule.uid"
	// LabelRunConfiguration is the name of the RunConfiguration that owns
	// the run's Run or RunSchedule. The same key on a Run or RunSchedule
	// holds that RunConfiguration's UID instead
	// (pipelinesv1beta1.LabelOwnerRunConfiguration); here LabelRunConfigurationUID does.
	LabelRunConfiguration = "pipelines.kubeflow.org/runconfiguration"
	// LabelRunConfigurationUID is the UID of the RunConfiguration that owns
	// the run's Run or RunSchedule.
	LabelRunConfigurationUID = "pipelines.kubeflow.org/runconfiguration.uid"
	LabelExperiment          = "pipelines.kubeflow.org/experiment"
)

// Annotations on what the Tekton provider creates.
const (
	// AnnotationResource is "Kind namespace/name" of the resource an object
	// was made for, whole.
	AnnotationResource = "pipelines.kubeflow.org/resource"
	// AnnotationRunConfiguration is "namespace/name" of the RunConfiguration
	// of LabelRunConfiguration, whole.
	AnnotationRunConfiguration = "pipelines.kubeflow.org/runconfiguration"
	// AnnotationArtifactsDirectory on a compiled Pipeline is the directory
	// of the artifacts volume its pipeline root ends in: that of the
	// namespace the Pipeline resource belongs to, the only one its runs
	// mount.
	AnnotationArtifactsDirectory = "pipelines.kubeflow.org/artifacts-directory"
	// AnnotationScheduledTime records when a scheduled run was due.
	AnnotationScheduledTime = "pipelines.kubeflow.org/scheduled-time"
	// AnnotationCompletionRecorded on a scheduled run names the
	// RunConfiguration (UID) that recorded its completion; the operator's
	// completion controller writes it.
	AnnotationCompletionRecorded = "pipelines.kubeflow.org/completion-recorded"
)

// Annotations the compiler puts on a compiled Pipeline for the Tekton
// provider.
const (
	// AnnotationOutputs on a compiled Pipeline and on its PipelineRuns
	// lists the pipeline's output artifacts as JSON ([]OutputArtifact).
	AnnotationOutputs = "pipelines.kubeflow.org/outputs"
	// AnnotationResourceParams holds the ResourceParams of the Pipeline's
	// tasks (JSON list): which Pipeline param drives which resource of
	// which task.
	AnnotationResourceParams = "pipelines.kubeflow.org/resource-params"
	// AnnotationCaching on a compiled Pipeline whose tasks ask for caching
	// says whether they get it.
	AnnotationCaching = "pipelines.kubeflow.org/caching"
	// AnnotationTaskRunSpecs holds the pod settings of the kfp-kubernetes
	// config, as JSON []tektonv1.PipelineTaskRunSpec.
	AnnotationTaskRunSpecs = "pipelines.kubeflow.org/task-run-specs"
)

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

// The kfp-kubernetes CreatePVC and DeletePVC support: the compiler
// (internal/kfpir) lists the tasks that manage claims on a compiled
// Pipeline, the Tekton provider runs them as an account that may, and
// kfp-task pvc labels each claim it makes (with LabelManagedBy
// ManagedByTektonProvider) and deletes only claims so labelled for the
// pipeline's namespace.
const (
	// AnnotationPVCTasks lists, as a JSON array, the Tekton names of the
	// tasks that create or delete claims and so need an account that may.
	AnnotationPVCTasks = "pipelines.kubeflow.org/pvc-tasks"
	// LabelPVCOwner on a claim a create task made is the namespace whose
	// pipeline made it.
	LabelPVCOwner = "pipelines.kubeflow.org/pvc-owner"
	// LabelPVCRun on such a claim is the PipelineRun that made it.
	LabelPVCRun = "pipelines.kubeflow.org/pvc-run"
)
