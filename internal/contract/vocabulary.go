package contract

// The vocabulary of the operator's contract with the shared Tasks, the
// providers and Tekton: the labels and annotations on the PipelineRuns,
// Tasks and provider-service objects the operator makes, those the Tekton
// provider puts on what it makes and the operator reads, the kinds and
// operations a provider is asked to run. They are here, not in api/v1beta1,
// because their meaning is agreed between the operator and what runs in
// the workflow namespaces, not part of the user's API; keys a user meets on
// the API's own resources are in api/v1beta1. docs/vocabulary.md lists
// both. Values are on objects in clusters, and a provider or kfp-operator's
// tooling may select by them: never change one.

// Kind is a resource kind as the shared Tasks, the owner.kind label and a
// provider's command line name it: the API kind in lower case.
type Kind string

// The kinds a provider runs operations for.
const (
	KindPipeline    Kind = "pipeline"
	KindRun         Kind = "run"
	KindRunSchedule Kind = "runschedule"
	KindExperiment  Kind = "experiment"
)

// Operation is what the operator asks a provider to do with a resource: a
// shared Task's task-operation label, a PipelineRun's operation label, the
// provider's second argument.
type Operation string

// The operations. OperationCompile is only the compile Task's
// task-operation label, never a provider's.
const (
	OperationCreate  Operation = "create"
	OperationUpdate  Operation = "update"
	OperationDelete  Operation = "delete"
	OperationCompile Operation = "compile"
)

// LabelManagedBy is Kubernetes' recommended label naming who manages an
// object; its values below say which part of this project does.
const LabelManagedBy = "app.kubernetes.io/managed-by"

// Values of LabelManagedBy.
const (
	// ManagedByOperator marks what the operator makes: the shared Tasks,
	// the compiler account, provider services, operation PipelineRuns.
	ManagedByOperator = "kfp-tekton-operator"
	// ManagedByTektonProvider marks the ML pipelines' Pipelines,
	// PipelineRuns and CronJobs the Tekton provider makes; the operator
	// watches PipelineRuns so marked for completion.
	ManagedByTektonProvider = "kfp-tekton-provider"
)

// LabelComponent is Kubernetes' recommended label naming what an object
// is part of; ComponentProviderService marks a provider service's objects.
const (
	LabelComponent           = "app.kubernetes.io/component"
	ComponentProviderService = "provider-service"
)

// LabelTektonPipeline is Tekton's own label naming a PipelineRun's
// Pipeline; the operator sets it on its operation PipelineRuns (whose
// pipeline is embedded) so they list like referenced ones.
const LabelTektonPipeline = "tekton.dev/pipeline"

// LabelPodSecurityEnforce is Pod Security admission's enforcement label on
// a namespace; the operator reads it on workflow namespaces to say when
// Tekton's own containers would be refused there.
const LabelPodSecurityEnforce = "pod-security.kubernetes.io/enforce"

// AnnotationDescription is Kubernetes' annotation describing an object to
// people; the operator sets it on the accounts and Secrets it makes.
const AnnotationDescription = "kubernetes.io/description"

// AnnotationAutoCleanupPVC is Tekton's annotation asking it to delete a
// run's volumeClaimTemplate claims when the run ends (honoured when
// Tekton's coschedule is "workspaces", its default).
const AnnotationAutoCleanupPVC = "tekton.dev/auto-cleanup-pvc"

// Labels on every operation PipelineRun the operator creates. Tekton
// copies them to the TaskRuns and Pods, so `kubectl get pods -l ...` finds
// those too. LabelProvider and LabelProviderNS also select a provider
// service's pods, and the operation pods allowed to call it.
const (
	LabelOwnerKind      = "pipelines.kubeflow.org/owner.kind" // a Kind
	LabelOwnerName      = "pipelines.kubeflow.org/owner.name"
	LabelOwnerNamespace = "pipelines.kubeflow.org/owner.namespace"
	LabelOwnerUID       = "pipelines.kubeflow.org/owner.uid"
	LabelOperation      = "pipelines.kubeflow.org/operation" // an Operation
	// LabelProvider is the Provider's name, shortened to a label value.
	LabelProvider   = "pipelines.kubeflow.org/provider"
	LabelProviderNS = "pipelines.kubeflow.org/provider.namespace"
	LabelVersion    = "pipelines.kubeflow.org/version"
	LabelAttempt    = "pipelines.kubeflow.org/attempt"
)

// Annotations on the operation PipelineRuns.
const (
	// AnnotationOwner holds "namespace/name" of a PipelineRun's resource in
	// full (a label value is cut to 63 characters).
	AnnotationOwner = "pipelines.kubeflow.org/owner"
	// AnnotationCreatedAt records when the controller built a PipelineRun
	// (CreatedAtLayout, UTC), to order a resource's runs exactly.
	AnnotationCreatedAt = "pipelines.kubeflow.org/created-at"
	// AnnotationProvider is "namespace/name" of a Provider, whole: on an
	// operation PipelineRun the Provider it was made for, on a provider
	// service's objects the Provider they serve (so their changes reach
	// it).
	AnnotationProvider = "pipelines.kubeflow.org/provider"
	// AnnotationOrdinal numbers a resource's runs in the order they were
	// made; it is part of each run's name.
	AnnotationOrdinal = "pipelines.kubeflow.org/ordinal"
	// CreatedAtLayout is RFC 3339 with fixed-width nanoseconds, so the
	// annotation also sorts as text.
	CreatedAtLayout = "2006-01-02T15:04:05.000000000Z07:00"
)

// AnnotationPipelineVersion is the pipeline version, whole: on an
// operation PipelineRun the one a Run or RunSchedule operation ran with, on
// the Tekton provider's objects the one they run. The Tekton provider's
// LabelPipelineVersion is the same key as a label, shortened.
const AnnotationPipelineVersion = "pipelines.kubeflow.org/pipeline-version"

// Labels on every shared Task (and, through Tekton, its TaskRuns' pods).
const (
	LabelTaskKind      = "pipelines.kubeflow.org/task-kind"      // a Kind
	LabelTaskOperation = "pipelines.kubeflow.org/task-operation" // an Operation
	// LabelCallsProvider marks the Tasks whose pods call the provider
	// (Tekton copies a Task's labels to its TaskRuns' pods): a provider
	// service admits only pods carrying it, never the compile pod's tenant
	// code.
	LabelCallsProvider = "pipelines.kubeflow.org/calls-provider"
)

// AnnotationOperatorVersion records which operator version applied a
// shared Task.
const AnnotationOperatorVersion = "pipelines.kubeflow.org/operator-version"

// AnnotationProviders marks a service account of a shared workflow
// namespace for the Providers (comma-separated "namespace/name") that may
// run as it.
const AnnotationProviders = "pipelines.kubeflow.org/providers"
