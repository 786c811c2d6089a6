package lifecycle

// The lifecycle engine's API access (the Pipeline, Experiment, RunSchedule
// and Run controllers), generated into config/rbac by controller-gen
// (`make manifests`) and from there into the charts. A namespace of
// `workflow-namespace` is a scope, not a name: the charts grant those rules
// in each provider namespace (or the workflowNamespace).

// The resources: watched (the manager's cache), the finalizer added and
// removed with a patch, the status patched.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=pipelines;experiments;runschedules;runs,verbs=list;watch;patch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=pipelines/status;experiments/status;runschedules/status;runs/status,verbs=patch

// Providers: watched, to requeue the resources using one that changed, and
// read from the cache.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=providers,verbs=list;watch

// PipelineRuns: watched cluster-wide through the label-filtered cache (they
// live in every provider namespace); created for each operation, patched to
// cancel one (spec.status), read directly when a create finds its name
// taken, to tell a lost answer from a squatter, deleted when pruned (by UID),
// and deleted all at once (by owner UID label) when their resource goes.
// +kubebuilder:rbac:groups=tekton.dev,resources=pipelineruns,verbs=list;watch
// +kubebuilder:rbac:groups=tekton.dev,resources=pipelineruns,verbs=get;create;patch;delete;deletecollection,namespace=workflow-namespace

// TaskRuns of a failed PipelineRun, read once to say which task and step
// failed and with what provider error.
// +kubebuilder:rbac:groups=tekton.dev,resources=taskruns,verbs=get,namespace=workflow-namespace

// A namespace's artifact repositories (Argo format), by name only, in any
// namespace holding resources.
// +kubebuilder:rbac:groups="",resources=configmaps,resourceNames=artifact-repositories,verbs=get

// Events on the resources when their Synchronized state changes
// (events.k8s.io/v1; patch adds to an event series).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// RunConfigurations: watched, to resolve Runs' valueFrom parameters from
// their latest succeeded run.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runconfigurations,verbs=list;watch

// A resource being deleted looks at its workflow namespace: one being
// deleted itself lets the resource go without a backend delete.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
