package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourcesUse says the executor's resources refer to input key.
func resourcesUse(exec *ContainerSpec, key string) bool {
	data, _ := json.Marshal(exec.Resources)
	return strings.Contains(string(data), "'"+key+"'")
}

// resourceField is one of the executor's resources: its text (or, in the
// older form, a number of unit) and where it goes.
type resourceField struct {
	list   string // limits or requests
	name   corev1.ResourceName
	text   string
	number float64
	unit   string
}

// computeResources maps the executor's resources: those known when
// compiling to the main step's, those from pipeline parameters to
// ResourceParams of the step (resourceparams.go).
func (c *compiler) computeResources(task string, inputs *TaskInputs, r *Resources) (corev1.ResourceRequirements, []ResourceParam, error) {
	var req corev1.ResourceRequirements
	var params []ResourceParam
	if r == nil {
		return req, nil, nil
	}
	fields := []resourceField{
		{"limits", corev1.ResourceCPU, r.ResourceCPULimit, r.CPULimit, ""},
		{"requests", corev1.ResourceCPU, r.ResourceCPURequest, r.CPURequest, ""},
		{"limits", corev1.ResourceMemory, r.ResourceMemoryLimit, r.MemoryLimit, "G"},
		{"requests", corev1.ResourceMemory, r.ResourceMemoryRequest, r.MemoryRequest, "G"},
	}
	for _, f := range fields {
		src, err := c.resourceValue(task, inputs, f.list+"."+string(f.name), f.text)
		if err != nil {
			return req, nil, err
		}
		if src.param != "" {
			params = append(params, ResourceParam{List: f.list, Name: string(f.name), QuantityParam: src.param})
			continue
		}
		if err := setResource(&req, task, f, src.text); err != nil {
			return req, nil, err
		}
	}
	if len(r.Accelerator) > 0 && !isEmptyJSON(r.Accelerator) {
		p, err := c.accelerator(task, inputs, r.Accelerator, &req)
		if err != nil {
			return req, nil, err
		}
		if p != nil {
			params = append(params, *p)
		}
	}
	for i := range params {
		params[i].PipelineTaskName, params[i].Step = c.taskNames[task], MainStep
	}
	return req, params, nil
}

// setResource sets a resource known when compiling.
func setResource(req *corev1.ResourceRequirements, task string, f resourceField, text string) error {
	if text == "" && f.number > 0 {
		text = strconv.FormatFloat(f.number, 'f', -1, 64) + f.unit
	}
	if text == "" {
		return nil
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return fmt.Errorf("task %q: resource %s %q: %w", task, f.name, text, err)
	}
	list := &req.Limits
	if f.list == "requests" {
		list = &req.Requests
	}
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[f.name] = q
	return nil
}

// accelerator is resources.accelerator as a limit, as KFP's own backend
// sets it: the type is the resource's name (an extended resource such as
// nvidia.com/gpu), the count its quantity. Either may come from a pipeline
// parameter: then the limit is a ResourceParam.
func (c *compiler) accelerator(task string, inputs *TaskInputs, raw json.RawMessage, req *corev1.ResourceRequirements) (*ResourceParam, error) {
	var a struct {
		Type, ResourceType string
		Count              json.Number
		ResourceCount      string
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("task %q: resources.accelerator: %w", task, err)
	}
	typ, err := c.resourceValue(task, inputs, "accelerator type", firstNonEmpty(a.ResourceType, a.Type))
	if err != nil {
		return nil, err
	}
	count, err := c.resourceValue(task, inputs, "accelerator count", firstNonEmpty(a.ResourceCount, a.Count.String()))
	if err != nil {
		return nil, err
	}
	if typ.param == "" {
		if err := checkExtendedResource(typ.text); err != nil {
			return nil, unsupported(task, "accelerator type "+typ.text, "%v", err)
		}
	}
	if count.param == "" {
		count.text = firstNonEmpty(count.text, "1")
		if _, err := resource.ParseQuantity(count.text); err != nil {
			return nil, fmt.Errorf("task %q: accelerator count %q: %w", task, count.text, err)
		}
	}
	if typ.param != "" || count.param != "" {
		return &ResourceParam{List: "limits", Name: typ.text, NameParam: typ.param, Quantity: count.text, QuantityParam: count.param}, nil
	}
	return nil, setResource(req, task, resourceField{list: "limits", name: corev1.ResourceName(typ.text)}, count.text)
}
