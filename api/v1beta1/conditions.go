package v1beta1

// Condition types every kind reports.
const (
	// ConditionReady summarises the resource (kstatus compatible): True once the
	// newest spec is in effect, False with a reason when it cannot be, Unknown
	// while work is in progress.
	ConditionReady = "Ready"

	// ConditionSynchronized carries the synchronization state with the backend
	// as its reason (one of the SynchronizationState values), as kfp-operator does.
	ConditionSynchronized = "Synchronized"
)

// SynchronizationState is the reason of the Synchronized condition.
type SynchronizationState string

// Synchronization states, as in kfp-operator.
const (
	StateCreating  SynchronizationState = "Creating"
	StateUpdating  SynchronizationState = "Updating"
	StateSucceeded SynchronizationState = "Succeeded"
	StateDeleting  SynchronizationState = "Deleting"
	StateDeleted   SynchronizationState = "Deleted"
	StateFailed    SynchronizationState = "Failed"
)

// Reasons of the Ready condition. A False Ready always carries one of these, so
// a client can tell the cause without parsing the message.
const (
	ReasonReady                  = "Ready"
	ReasonProgressing            = "Progressing"
	ReasonProviderNotFound       = "ProviderNotFound"
	ReasonNamespaceNotAllowed    = "NamespaceNotAllowed"
	ReasonProviderChanged        = "ProviderChanged"
	ReasonProviderNotReady       = "ProviderNotReady"
	ReasonSynchronized           = "Synchronized"
	ReasonOperatorMisconfigured  = "OperatorMisconfigured"
	ReasonPipelineRunFailed      = "PipelineRunFailed"
	ReasonInvalidSpec            = "InvalidSpec"
	ReasonArtifactRepoInvalid    = "ArtifactRepositoryInvalid"
	ReasonTasksApplied           = "TasksApplied"
	ReasonTasksNotApplied        = "TasksNotApplied"
	ReasonServiceAccountNotFound = "ServiceAccountNotFound"
	// ReasonServiceAccountNotAllowed: with a workflowNamespace, the Provider's
	// service account there is not marked for it.
	ReasonServiceAccountNotAllowed = "ServiceAccountNotAllowed"
	ReasonImageNotResolvable       = "ImageNotResolvable"
	// ReasonProviderServiceNotReady: a Provider's service (spec.serviceImage)
	// is not serving yet, or could not be deployed; the message says why.
	ReasonProviderServiceNotReady = "ProviderServiceNotReady"
	// ReasonPodSecurityIncompatible: the workflow namespace enforces Pod
	// Security `restricted` and Tekton is not configured to run there.
	ReasonPodSecurityIncompatible = "PodSecurityIncompatible"
	// ReasonPipelineRunNotCreated: the API server refused the operation's
	// PipelineRun (its words are in the message).
	ReasonPipelineRunNotCreated = "PipelineRunNotCreated"
	// ReasonBackendRecordMissing: the status names a backend object, but no
	// PipelineRun of the resource records it (pruned, or the status was
	// written by someone else), so the operator will not update or delete it.
	ReasonBackendRecordMissing = "BackendRecordMissing"
	// ReasonInternalError: the operator could not build what it needs; a bug
	// to report, not something the resource's author can fix.
	ReasonInternalError = "InternalError"
	// ReasonPipelineNotFound: the Pipeline a Run or RunSchedule references
	// does not exist in its namespace.
	ReasonPipelineNotFound = "PipelineNotFound"
	// ReasonPipelineNotReady: the referenced Pipeline is not synchronised
	// with a backend yet (Ready stays Unknown while it is on its way).
	ReasonPipelineNotReady = "PipelineNotReady"
	// ReasonPipelineProviderMismatch: the referenced Pipeline lives in
	// another provider's backend than the one the resource names.
	ReasonPipelineProviderMismatch = "PipelineProviderMismatch"
	// ReasonOwnedResourceNotReady: a RunSchedule or Run a RunConfiguration
	// made is not Ready (the message names it and why).
	ReasonOwnedResourceNotReady = "OwnedResourceNotReady"
	// ReasonProviderInUse: the Provider is being deleted but resources still
	// reference it (the message counts and names them); it stays until
	// they are gone.
	ReasonProviderInUse = "ProviderInUse"
	// ReasonDependencyMissing: a valueFrom parameter names a
	// RunConfiguration artifact that does not exist yet; the run waits.
	ReasonDependencyMissing = "DependencyMissing"
	// ReasonQueued: the operation waits for room among its Provider's
	// operations in flight (the operator's maxOperationsInFlight); it starts
	// as they end, in its turn: the namespaces waiting take turns, so do
	// the kinds waiting within a namespace, and within a namespace and kind
	// the first in goes first.
	ReasonQueued = "Queued"
)
