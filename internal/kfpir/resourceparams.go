package kfpir

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Resources set from pipeline parameters (the SDK's set_cpu_limit(x) and
// the like with a pipeline input x: resourceCpuLimit is the placeholder of
// a task input bound to it). A task's step cannot take its resources from
// a param, but the values are known when the PipelineRun is created: the
// compiler records which Pipeline param drives which resource of which
// task (AnnotationResourceParams), and whoever creates the run sets the
// task's stepSpecs from the run's values (RunResources), refusing a value
// that is not a quantity or a resource name. From a task's output, the
// value is known only once that task ran: refused.

// ResourceParam is one resource of a task's step set from a Pipeline
// param: the resource's name is Name or the value of NameParam (an
// accelerator type), its quantity Quantity or the value of QuantityParam.
type ResourceParam struct {
	PipelineTaskName string `json:"pipelineTaskName"`
	Step             string `json:"step"`
	// List is "limits" or "requests".
	List          string `json:"list"`
	Name          string `json:"name,omitempty"`
	NameParam     string `json:"nameParam,omitempty"`
	Quantity      string `json:"quantity,omitempty"`
	QuantityParam string `json:"quantityParam,omitempty"`
}

// wholeInputRE is a resource field that is one input's placeholder.
var wholeInputRE = regexp.MustCompile(`^\{\{\$\.inputs\.parameters\['([^']+)'\]\}\}$`)

// resourceSource is a resource field's value when compiling (text) or the
// Pipeline param giving it when the run is created (param).
type resourceSource struct{ text, param string }

// resourceValue resolves a resource field of the task: literal text, or a
// placeholder of a task input that is a constant or a pipeline parameter.
func (c *compiler) resourceValue(task string, inputs *TaskInputs, field, text string) (resourceSource, error) {
	if !strings.Contains(text, "{{") {
		return resourceSource{text: text}, nil
	}
	m := wholeInputRE.FindStringSubmatch(text)
	if m == nil {
		return resourceSource{}, unsupported(task, "resource from a placeholder that is not an input", "%s %s", field, text)
	}
	var in *InputParameter
	if inputs != nil {
		in = inputs.Parameters[m[1]]
	}
	switch {
	case in == nil:
		return resourceSource{}, fmt.Errorf("task %q: resource %s: input %q is not bound", task, field, m[1])
	case in.TaskOutputParameter != nil:
		return resourceSource{}, unsupported(task, "resource from a task output", "%s from %q: known only once it ran, after the task's pod is specified", field, in.TaskOutputParameter.ProducerTask)
	case in.RuntimeValue != nil && len(in.RuntimeValue.Constant) > 0:
		v, err := valueText(in.RuntimeValue.Constant, "")
		return resourceSource{text: v}, err
	case in.ComponentInputParameter != "" && c.params[in.ComponentInputParameter] != "":
		return resourceSource{param: c.params[in.ComponentInputParameter]}, nil
	}
	return resourceSource{}, unsupported(task, "resource from a pipeline parameter", "%s from input %q, neither a constant nor a pipeline input", field, m[1])
}

// RunResources are the stepSpecs, by Pipeline task, that the run's param
// values give (values holds every param's value, defaults included); a
// value that is not a quantity or an extended resource name is an error
// naming the param and the task.
func RunResources(annotation string, values map[string]string) (map[string][]tektonv1.TaskRunStepSpec, error) {
	var entries []ResourceParam
	if err := json.Unmarshal([]byte(annotation), &entries); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", contract.AnnotationResourceParams, err)
	}
	steps := map[string]map[string]*corev1.ResourceRequirements{}
	for _, e := range entries {
		name, q, err := e.resolve(values)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", e.PipelineTaskName, err)
		}
		if steps[e.PipelineTaskName] == nil {
			steps[e.PipelineTaskName] = map[string]*corev1.ResourceRequirements{}
		}
		r := steps[e.PipelineTaskName][e.Step]
		if r == nil {
			r = &corev1.ResourceRequirements{}
			steps[e.PipelineTaskName][e.Step] = r
		}
		list := &r.Limits
		if e.List == "requests" {
			list = &r.Requests
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	out := map[string][]tektonv1.TaskRunStepSpec{}
	for task, byStep := range steps {
		for _, step := range sortedKeys(byStep) {
			out[task] = append(out[task], tektonv1.TaskRunStepSpec{Name: step, ComputeResources: *byStep[step]})
		}
	}
	return out, nil
}

// resolve is the entry's resource name and quantity under the values.
func (e ResourceParam) resolve(values map[string]string) (corev1.ResourceName, resource.Quantity, error) {
	name, text := e.Name, e.Quantity
	for _, p := range []string{e.NameParam, e.QuantityParam} {
		if _, ok := values[p]; p != "" && !ok {
			return "", resource.Quantity{}, fmt.Errorf("resource from parameter %s: the run gives no value", p)
		}
	}
	if e.NameParam != "" {
		name = values[e.NameParam]
		if err := checkExtendedResource(name); err != nil {
			return "", resource.Quantity{}, fmt.Errorf("accelerator type from parameter %s: %w", e.NameParam, err)
		}
	}
	if e.QuantityParam != "" {
		text = values[e.QuantityParam]
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		from := "quantity"
		if e.QuantityParam != "" {
			from = "parameter " + e.QuantityParam
		}
		return "", resource.Quantity{}, fmt.Errorf("%s %s from %s: %q is not a Kubernetes quantity", e.List, name, from, text)
	}
	return corev1.ResourceName(name), q, nil
}

// checkExtendedResource refuses an accelerator type Kubernetes cannot
// take as a resource name: KFP's driver uses the type as the name, so a
// cloud type (NVIDIA_TESLA_P4, tpu-v3) would make no valid pod.
func checkExtendedResource(typ string) error {
	if !strings.Contains(typ, "/") || len(validation.IsQualifiedName(typ)) > 0 {
		return fmt.Errorf("%q is not a Kubernetes extended resource name (such as nvidia.com/gpu); KFP uses the accelerator type as the resource's name", typ)
	}
	return nil
}

// annotateResourceParams puts the tasks' resources from parameters on the
// Pipeline.
func (c *compiler) annotateResourceParams(p *tektonv1.Pipeline) error {
	if len(c.resourceParams) == 0 {
		return nil
	}
	sort.SliceStable(c.resourceParams, func(i, j int) bool {
		return c.resourceParams[i].PipelineTaskName < c.resourceParams[j].PipelineTaskName
	})
	data, err := json.Marshal(c.resourceParams)
	if err != nil {
		return err
	}
	setAnnotation(p, contract.AnnotationResourceParams, string(data))
	return nil
}
