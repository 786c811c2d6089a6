package operator

// The manager's own API access, generated into config/rbac by
// controller-gen (`make manifests`) and from there into the operator chart.
// Each controller package's rbac.go holds the rules of what it reconciles. A
// namespace of `operator-namespace` is a scope, not a name: the chart grants
// those rules in the namespace the operator runs in (its leader election
// lease's).

// Leader election: one Lease, read, created and renewed (client-go's
// LeaseLock uses get, create and update only), and the core/v1 Events
// client-go's leader election records on it.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=operator-namespace
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=operator-namespace

// Secure metrics: each scraper's bearer token checked with a TokenReview,
// its right to GET /metrics with a SubjectAccessReview.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The key sealing the records the operator keeps in statuses: read, and
// created by the first replica to start (create cannot be narrowed by name).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create,namespace=operator-namespace

// The conversion webhook's certificate (internal/conversionwebhook): its
// Secret, created empty by the chart, kept current by every replica (the
// rotator's cache lists and watches the operator namespace's Secrets), and
// the CA bundle injected into the CRDs it converts, whose webhook service
// the leader points at this operator.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch;update,namespace=operator-namespace
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update;patch,resourceNames=pipelines.pipelines.kubeflow.org;runconfigurations.pipelines.kubeflow.org;runs.pipelines.kubeflow.org;runschedules.pipelines.kubeflow.org;experiments.pipelines.kubeflow.org;providers.pipelines.kubeflow.org

// The finalizer webhook's configuration (internal/finalizerwebhook), made by
// the chart: the rotator watches it and injects the CA bundle, by name only.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=update;patch,resourceNames=kfp-tekton-operator-finalizer
