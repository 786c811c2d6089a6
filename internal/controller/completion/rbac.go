package completion

// The completion controller's API access, generated into config/rbac by
// controller-gen (`make manifests`). The Tekton provider's PipelineRuns are
// watched through the same label-filtered cache as the operator's own; a
// failed run's TaskRuns are read once to name the failed task.
// +kubebuilder:rbac:groups=tekton.dev,resources=pipelineruns,verbs=list;watch
// +kubebuilder:rbac:groups=tekton.dev,resources=taskruns,verbs=get,namespace=workflow-namespace
// A scheduled run is annotated once its completion is recorded.
// +kubebuilder:rbac:groups=tekton.dev,resources=pipelineruns,verbs=patch,namespace=workflow-namespace
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs;runconfigurations;providers,verbs=list;watch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs/status;runconfigurations/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Completed Runs deleted after runCompletionTTL.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs,verbs=delete
