package tektonprovider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

// setResourcesFromParams sets the stepSpecs of the tasks whose resources
// come from pipeline parameters (contract.AnnotationResourceParams): the
// values are the run's, or the Pipeline's defaults, known now that the run
// is created. A value that is no quantity or resource name fails the run's
// creation, naming the parameter and the task.
func setResourcesFromParams(pr *tektonv1.PipelineRun, p *tektonv1.Pipeline) error {
	annotation, ok := p.Annotations[contract.AnnotationResourceParams]
	if !ok {
		return nil
	}
	values := map[string]string{}
	for _, ps := range p.Spec.Params {
		if ps.Default != nil {
			values[ps.Name] = ps.Default.StringVal
		}
	}
	for _, param := range pr.Spec.Params {
		values[param.Name] = param.Value.StringVal
	}
	steps, err := kfpir.RunResources(annotation, values)
	if err != nil {
		return fmt.Errorf("pipeline %s: resources from parameters: %w", p.Name, err)
	}
	for _, task := range slices.Sorted(maps.Keys(steps)) {
		spec := taskRunSpec(pr, task)
		spec.StepSpecs = append(spec.StepSpecs, steps[task]...)
	}
	return nil
}

// taskRunSpec is the run's PipelineTaskRunSpec of task, added if missing
// (Tekton takes one per task).
func taskRunSpec(pr *tektonv1.PipelineRun, task string) *tektonv1.PipelineTaskRunSpec {
	for i := range pr.Spec.TaskRunSpecs {
		if pr.Spec.TaskRunSpecs[i].PipelineTaskName == task {
			return &pr.Spec.TaskRunSpecs[i]
		}
	}
	pr.Spec.TaskRunSpecs = append(pr.Spec.TaskRunSpecs, tektonv1.PipelineTaskRunSpec{PipelineTaskName: task})
	return &pr.Spec.TaskRunSpecs[len(pr.Spec.TaskRunSpecs)-1]
}

// setPVCAccount runs the pipeline's CreatePVC and DeletePVC tasks
// (contract.AnnotationPVCTasks) as the account that may manage claims, and
// no other task.
func setPVCAccount(pr *tektonv1.PipelineRun, p *tektonv1.Pipeline, s Settings) error {
	annotation, ok := p.Annotations[contract.AnnotationPVCTasks]
	if !ok {
		return nil
	}
	var tasks []string
	if err := json.Unmarshal([]byte(annotation), &tasks); err != nil {
		return fmt.Errorf("pipeline %s: annotation %s: %w", p.Name, contract.AnnotationPVCTasks, err)
	}
	if len(tasks) == 0 {
		return nil
	}
	if s.PVCServiceAccount == "" {
		return fmt.Errorf("pipeline %s creates or deletes PersistentVolumeClaims (kfp-kubernetes CreatePVC/DeletePVC, tasks %s): "+
			"the Provider names no account for them (provider parameter %s)", p.Name, strings.Join(tasks, ", "), ParamPVCServiceAccount)
	}
	for _, task := range tasks {
		taskRunSpec(pr, task).ServiceAccountName = s.PVCServiceAccount
	}
	return nil
}
