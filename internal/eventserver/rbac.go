package eventserver

// /events authenticates callers with TokenReviews and records completions
// in status (controller-gen → config/rbac, `make manifests`).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs;runconfigurations;providers,verbs=get;list;watch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs/status;runconfigurations/status,verbs=patch
