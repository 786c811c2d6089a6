package runconfiguration

// The RunConfiguration controller's API access, generated into config/rbac
// by controller-gen (`make manifests`) and from there into the operator chart.

// RunConfigurations: watched (the manager's cache) and their status patched.
// What they own carries an ownerReference with blockOwnerDeletion, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on the owner's finalizers.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runconfigurations/status,verbs=patch
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runconfigurations/finalizers,verbs=update

// One RunSchedule per schedule: created, patched when the run spec changes,
// deleted when its schedule goes. Runs: created when a trigger fires. Both
// watched as owned objects.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runschedules,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=runs,verbs=list;watch;create

// Pipelines: watched, for onChange: [pipeline], and their version read from the cache.
// +kubebuilder:rbac:groups=pipelines.kubeflow.org,resources=pipelines,verbs=list;watch
