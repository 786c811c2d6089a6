package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// resourcesUse says the executor's resources refer to input key.
func resourcesUse(exec *ContainerSpec, key string) bool {
	data, _ := json.Marshal(exec.Resources)
	return strings.Contains(string(data), "'"+key+"'")
}

// computeResources maps the executor's resources; accelerators are refused.
func computeResources(task string, r *Resources) (corev1.ResourceRequirements, error) {
	var req corev1.ResourceRequirements
	if r == nil {
		return req, nil
	}
	if len(r.Accelerator) > 0 && !isEmptyJSON(r.Accelerator) {
		name, count, err := accelerator(task, r.Accelerator)
		if err != nil {
			return req, err
		}
		req.Limits = corev1.ResourceList{name: count}
	}
	set := func(list *corev1.ResourceList, name corev1.ResourceName, text string, number float64, unit string) error {
		var q resource.Quantity
		switch {
		case text != "":
			if strings.Contains(text, "{{") {
				return unsupported(task, "resource from a pipeline parameter", "%s %s", name, text)
			}
			parsed, err := resource.ParseQuantity(text)
			if err != nil {
				return fmt.Errorf("task %q: resource %s %q: %w", task, name, text, err)
			}
			q = parsed
		case number > 0:
			parsed, err := resource.ParseQuantity(strconv.FormatFloat(number, 'f', -1, 64) + unit)
			if err != nil {
				return fmt.Errorf("task %q: resource %s %v: %w", task, name, number, err)
			}
			q = parsed
		default:
			return nil
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
		return nil
	}
	for _, s := range []error{
		set(&req.Limits, corev1.ResourceCPU, r.ResourceCPULimit, r.CPULimit, ""),
		set(&req.Requests, corev1.ResourceCPU, r.ResourceCPURequest, r.CPURequest, ""),
		set(&req.Limits, corev1.ResourceMemory, r.ResourceMemoryLimit, r.MemoryLimit, "G"),
		set(&req.Requests, corev1.ResourceMemory, r.ResourceMemoryRequest, r.MemoryRequest, "G"),
	} {
		if s != nil {
			return req, s
		}
	}
	return req, nil
}

// accelerator is resources.accelerator as a limit, as KFP's own backend
// sets it: the type is the resource's name (an extended resource such as
// nvidia.com/gpu), the count its quantity.
func accelerator(task string, raw json.RawMessage) (corev1.ResourceName, resource.Quantity, error) {
	var a struct {
		Type, ResourceType string
		Count              json.Number
		ResourceCount      string
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", resource.Quantity{}, fmt.Errorf("task %q: resources.accelerator: %w", task, err)
	}
	typ := firstNonEmpty(a.ResourceType, a.Type)
	count := firstNonEmpty(a.ResourceCount, a.Count.String())
	if strings.Contains(typ+count, "{{") {
		return "", resource.Quantity{}, unsupported(task, "resource from a pipeline parameter", "accelerator %s %s", typ, count)
	}
	if !strings.Contains(typ, "/") || len(validation.IsQualifiedName(typ)) > 0 {
		return "", resource.Quantity{}, unsupported(task, "accelerator type "+typ, "not a Kubernetes extended resource name (such as nvidia.com/gpu)")
	}
	q, err := resource.ParseQuantity(firstNonEmpty(count, "1"))
	if err != nil {
		return "", resource.Quantity{}, fmt.Errorf("task %q: accelerator count %q: %w", task, count, err)
	}
	return corev1.ResourceName(typ), q, nil
}
