package contract

// Field indexes of the operator's cache. They are the operator's own,
// never on an object, but named here, beside the keys, so each name is
// defined once; several read like a label key (IndexProvider is the same
// string as LabelProvider) yet are distinct names for a distinct thing: an
// index's value is "namespace/name" or a UID the operator computes, not a
// label's value.
const (
	// IndexOwnerUID indexes cached operation PipelineRuns by their owner's
	// UID.
	IndexOwnerUID = "pipelines.kubeflow.org/owner.uid"
	// IndexPipeline indexes Runs and RunSchedules by "namespace/name" of
	// the Pipeline they run, RunConfigurations by that Pipeline's name (in
	// their own namespace).
	IndexPipeline = "pipelines.kubeflow.org/pipeline"
	// IndexDependency indexes Runs by "namespace/name" of each
	// RunConfiguration a valueFrom parameter names.
	IndexDependency = "pipelines.kubeflow.org/dependency"
	// IndexProvider indexes resources by "namespace/name" of their provider.
	IndexProvider = "pipelines.kubeflow.org/provider"
	// IndexUnfinishedProvider indexes the operator's operation PipelineRuns
	// that have not ended by "namespace/name" of their Provider.
	IndexUnfinishedProvider = "pipelines.kubeflow.org/unfinished.provider"
	// IndexUpstream indexes RunConfigurations by "namespace/name" of each
	// upstream RunConfiguration their triggers name.
	IndexUpstream = "pipelines.kubeflow.org/upstream"
)
