package lifecycle

// Labels on every PipelineRun the controllers create. Tekton copies them to
// the TaskRuns and Pods, so `kubectl get pods -l ...` finds those too.
const (
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	ManagedBy           = "kfp-tekton-operator"
	LabelOwnerKind      = "pipelines.kubeflow.org/owner.kind"
	LabelOwnerName      = "pipelines.kubeflow.org/owner.name"
	LabelOwnerNamespace = "pipelines.kubeflow.org/owner.namespace"
	LabelOwnerUID       = "pipelines.kubeflow.org/owner.uid"
	LabelOperation      = "pipelines.kubeflow.org/operation"
	LabelProvider       = "pipelines.kubeflow.org/provider"
	LabelProviderNS     = "pipelines.kubeflow.org/provider.namespace"
	LabelVersion        = "pipelines.kubeflow.org/version"
	LabelAttempt        = "pipelines.kubeflow.org/attempt"
	LabelTektonPipeline = "tekton.dev/pipeline"

	// AnnotationOwner holds "namespace/name" of a PipelineRun's resource in
	// full (a label value is cut to 63 characters).
	AnnotationOwner = "pipelines.kubeflow.org/owner"

	// AnnotationCreatedAt records when the controller built a PipelineRun
	// (CreatedAtLayout, UTC), to order a resource's runs exactly.
	AnnotationCreatedAt = "pipelines.kubeflow.org/created-at"
	// AnnotationProvider is "namespace/name" of the Provider a run was made
	// for, whole (the provider label is shortened past 63 characters).
	AnnotationProvider = "pipelines.kubeflow.org/provider"
	// AnnotationPipelineVersion is the pipeline version a Run or
	// RunSchedule operation ran with.
	AnnotationPipelineVersion = "pipelines.kubeflow.org/pipeline-version"
	// AnnotationOrdinal numbers a resource's runs in the order they were
	// made; it is part of each run's name.
	AnnotationOrdinal = "pipelines.kubeflow.org/ordinal"
	// CreatedAtLayout is RFC 3339 with fixed-width nanoseconds, so the
	// annotation also sorts as text.
	CreatedAtLayout = "2006-01-02T15:04:05.000000000Z07:00"

	// AnnotationSkipBackendDeletion on a resource being deleted lets it go
	// without the provider deleting it from the backend: the way out when
	// the provider itself is gone.
	AnnotationSkipBackendDeletion = "pipelines.kubeflow.org/skip-backend-deletion"

	// Finalizer holds a resource until its backend delete operation succeeded.
	Finalizer = "pipelines.kubeflow.org/backend"

	// IndexOwnerUID indexes cached PipelineRuns by their owner's UID.
	IndexOwnerUID = "pipelines.kubeflow.org/owner.uid"
	// IndexPipeline indexes Runs and RunSchedules by "namespace/name" of
	// the Pipeline they run.
	IndexPipeline = "pipelines.kubeflow.org/pipeline"
	// IndexDependency indexes Runs by "namespace/name" of each
	// RunConfiguration a valueFrom parameter names.
	IndexDependency = "pipelines.kubeflow.org/dependency"
	// IndexProvider indexes resources by "namespace/name" of their provider.
	IndexProvider = "pipelines.kubeflow.org/provider"
)

// Operations.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)
