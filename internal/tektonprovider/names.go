package tektonprovider

import (
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
)

// maxCronJobName leaves room in a 63-character Job name for the "-" and the
// scheduled minute the CronJob controller appends.
const maxCronJobName = 52

// PipelineID is the backend id of a Pipeline resource: stable across its
// versions and distinct for a later resource of the same name.
func PipelineID(res contract.Resource) string {
	if res.Status.Provider.ID != "" {
		return res.Status.Provider.ID
	}
	m := res.Metadata
	return naming.Name([]string{m.Name}, "pipeline", m.Namespace, m.Name, m.UID)
}

// PipelineVersionName names the Tekton Pipeline of one version of a
// pipeline.
func PipelineVersionName(id, version string) string {
	return naming.Name([]string{id}, id, version)
}

// RunName names the PipelineRun of a Run resource.
func RunName(res contract.Resource) string {
	m := res.Metadata
	return naming.Name([]string{m.Name}, "run", m.Namespace, m.Name, m.UID)
}

// CronJobName names the CronJob of a RunSchedule resource.
func CronJobName(res contract.Resource) string {
	m := res.Metadata
	return naming.Compact(maxCronJobName, m.Name, naming.Name(nil, "runschedule", m.Namespace, m.Name, m.UID))
}

// ExperimentID is the backend id of an Experiment: there is no backend
// object, only the label on runs, so the id just has to be stable.
func ExperimentID(res contract.Resource) string {
	if res.Status.Provider.ID != "" {
		return res.Status.Provider.ID
	}
	m := res.Metadata
	return m.Namespace + "/" + m.Name
}
