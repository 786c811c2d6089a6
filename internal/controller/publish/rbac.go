package publish

// The publish controllers' API access, generated into config/rbac by
// controller-gen (`make manifests`): the outboxes are read live, not only
// from the cache, so that a lagging cache does not resend delivered events.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs;runconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs/status;runconfigurations/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
