package provider

// The Provider controller's API access, generated into config/rbac by
// controller-gen (`make manifests`) and from there into the charts. A
// namespace of `workflow-namespace` or `tekton-namespace` is a scope, not a
// name: the charts grant those rules in each provider namespace (or the
// workflowNamespace) and in Tekton's namespace.

// Providers: watched (the manager's cache), the finalizer added and removed
// with a patch (optimistic lock), the status patched.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=providers,verbs=list;watch;patch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=providers/status,verbs=patch

// The kinds that reference Providers: watched and counted from the cache
// (status.users), and a Provider being deleted kept while any reference it.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=pipelines;experiments;runschedules;runs;runconfigurations,verbs=list;watch

// Shared Tasks: watched cluster-wide through the label-filtered cache (any
// namespace may hold a Provider), so an edited or deleted one is restored.
// +kubebuilder:rbac:groups=tekton.dev,resources=tasks,verbs=list;watch

// Shared Tasks: applied server-side (a patch; one that creates the Task is
// authorised as a create too) and removed all at once with the last
// Provider of their namespace.
// +kubebuilder:rbac:groups=tekton.dev,resources=tasks,verbs=create;patch;deletecollection,namespace=workflow-namespace

// The Provider's service account (does it exist, is it marked for the
// Provider) and its image pull secrets, read directly (never cached) to
// resolve the provider's images to digests. The secrets' names are known
// only from the service account at run time; the provider chart narrows
// both rules to the service account it creates and the pull secrets it lists.
// +kubebuilder:rbac:groups="",resources=serviceaccounts;secrets,verbs=get,namespace=workflow-namespace

// The compiler account compile pods run as (compiler_account.go): applied
// beside the shared Tasks and deleted with them. The provider chart narrows
// patch and delete to that account's name (create cannot be narrowed).
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create;patch;delete,namespace=workflow-namespace

// Pod Security: whether a workflow namespace enforces `restricted`, and
// Tekton's set-security-context feature flag (one ConfigMap, by name).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,resourceNames=feature-flags,verbs=get,namespace=tekton-namespace

// Events on the Provider when its readiness changes (events.k8s.io/v1;
// patch adds to an event series).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Provider services (spec.serviceImage) run as a Deployment and a Service
// in the workflow namespace; the cache holds only the operator's (by label).
// A pod's waiting reason is read when the Deployment is not available.
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;create;patch;delete,namespace=workflow-namespace
// +kubebuilder:rbac:groups="",resources=services,verbs=get;create;patch;delete,namespace=workflow-namespace
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;create;patch;delete,namespace=workflow-namespace
// +kubebuilder:rbac:groups="",resources=pods,verbs=list,namespace=workflow-namespace
