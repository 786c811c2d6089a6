package v1beta1

// The keys below are the ones a user meets on the resources of this API:
// they belong to the API because their meaning is part of it (a user sets
// AnnotationSkipBackendDeletion, sees the finalizers, lists a
// RunConfiguration's Runs by LabelOwnerRunConfiguration). Keys of the
// operator's contract with the shared Tasks and the providers, which
// users meet only on PipelineRuns and Tasks, are in internal/contract.
// docs/vocabulary.md lists them all. Every value here is on objects in
// clusters already: never change one.

// Kinds of this API, as metadata.kind and a contract resource's kind name
// them.
const (
	PipelineKind         = "Pipeline"
	RunKind              = "Run"
	RunScheduleKind      = "RunSchedule"
	RunConfigurationKind = "RunConfiguration"
	ExperimentKind       = "Experiment"
	ProviderKind         = "Provider"
)

// Finalizers.
const (
	// FinalizerBackend holds a Pipeline, Run, RunSchedule or Experiment
	// until its backend delete operation succeeded.
	FinalizerBackend = "pipelines.kubeflow.org/backend"
	// FinalizerSharedTasks holds a Provider until the shared Tasks it may
	// be the last user of are removed.
	FinalizerSharedTasks = "pipelines.kubeflow.org/shared-tasks"
)

// AnnotationSkipBackendDeletion on a Pipeline, Run, RunSchedule or
// Experiment being deleted lets it go without the provider deleting it
// from the backend: the way out when the provider itself is gone.
const AnnotationSkipBackendDeletion = "pipelines.kubeflow.org/skip-backend-deletion"

// Labels a RunConfiguration puts on the Runs and RunSchedules it makes.
const (
	// LabelOwnerRunConfiguration holds the UID of the RunConfiguration that
	// made a Run or RunSchedule; the RunConfiguration lists what it made by
	// it. The same key on the Tekton provider's PipelineRuns holds the
	// RunConfiguration's name instead (contract.LabelRunConfiguration): a
	// clash kept because Runs in clusters carry this one and the Tekton
	// provider's users select by the other (docs/vocabulary.md).
	LabelOwnerRunConfiguration = "pipelines.kubeflow.org/runconfiguration"
	// LabelTrigger is what made a RunConfiguration make a Run or
	// RunSchedule: one of the TriggerLabel* values.
	LabelTrigger = "pipelines.kubeflow.org/trigger"
	// LabelTriggerSource is the name (shortened to a label value) of what
	// fired: the RunConfiguration, the pipeline version or the upstream
	// RunConfiguration.
	LabelTriggerSource = "pipelines.kubeflow.org/trigger.source"
)

// Values of LabelTrigger. They predate, and differ from, kfp-operator's
// trigger types (contract.Trigger*, the annotations' values); Runs in
// clusters carry them.
const (
	TriggerLabelSchedule = "schedule"
	TriggerLabelPipeline = "onChange-pipeline"
	TriggerLabelRunSpec  = "onChange-runSpec"
	// TriggerLabelRunConfiguration: an upstream RunConfiguration's new
	// latest succeeded run (triggers.runConfigurations).
	TriggerLabelRunConfiguration = "runConfiguration"
)

// Annotations a RunConfiguration puts on each Run it makes, naming what
// fired it as kfp-operator's trigger indicator does (annotations, not
// labels: a source's name may be longer than a label value).
const (
	AnnotationTriggerType            = "pipelines.kubeflow.org/trigger-type"
	AnnotationTriggerSource          = "pipelines.kubeflow.org/trigger-source"
	AnnotationTriggerSourceNamespace = "pipelines.kubeflow.org/trigger-source-namespace"
)

// AnnotationDefaultArtifactRepository on a namespace's artifact
// repositories ConfigMap names its default key, as Argo Workflows' does
// (spec.artifactRepositoryRef without a key takes it).
const AnnotationDefaultArtifactRepository = "workflows.argoproj.io/default-artifact-repository"

// Annotations the conversion between v1alpha6 and v1beta1 keeps on a
// resource: what the other version holds and this one cannot, as JSON, so
// a round trip loses nothing.
const (
	// AnnotationV1beta1Remainder holds, on a v1alpha6 object, the v1beta1
	// data v1alpha6 cannot hold (JSON).
	AnnotationV1beta1Remainder = "v1beta1.pipelines.kubeflow.org/conversions.remainder"
	// AnnotationV1alpha6Remainder holds, on a v1beta1 object, the v1alpha6
	// data v1beta1 cannot hold (JSON).
	AnnotationV1alpha6Remainder = "v1alpha6.pipelines.kubeflow.org/conversions.remainder"
)
