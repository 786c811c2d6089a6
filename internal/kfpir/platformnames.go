package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

// Names from parameters. kfp-kubernetes names a Secret, ConfigMap or PVC
// either by a constant (the deprecated secretName, configMapName, constant
// fields) or by an InputParameterSpec (secretNameParameter,
// configMapNameParameter, pvcNameParameter, and for PVCs the deprecated
// taskOutputParameter and componentInputParameter): a runtimeValue
// constant is a name; a pipeline input or a task's output is bound in the
// task's scope by flatten (bindPlatformNames) and becomes a TaskSpec param
// named in the env var's secretKeyRef/configMapKeyRef or the volume, both
// of which Tekton substitutes when the TaskRun starts (Tekton v1.15.1:
// ApplyReplacements in pkg/reconciler/taskrun/resources/apply.go for the
// volumes' claimName, secretName and configMap name,
// pkg/container/container_replacements.go for env key refs; its
// validation does not check these references, so the tests check the
// text exactly). Pod settings (image
// pull secrets) are fixed before: a name from a parameter is refused there.
// A pipeline whose runs execute in another namespace may take from a
// parameter only the name of a claim its own CreatePVC task made: any
// other could name what is not the pipeline's, and is refused.

// nameParameter is a kfp-kubernetes InputParameterSpec naming an object.
type nameParameter struct {
	ComponentInputParameter string               `json:"componentInputParameter"`
	TaskOutputParameter     *TaskOutputParameter `json:"taskOutputParameter"`
	RuntimeValue            *RuntimeValue        `json:"runtimeValue"`
}

// nameOf is the constant name, or the parameter giving it (nil, nil: none).
func nameOf(constant string, p *nameParameter) (string, *InputParameter) {
	if constant != "" || p == nil {
		return constant, nil
	}
	if p.RuntimeValue != nil && p.ComponentInputParameter == "" && p.TaskOutputParameter == nil {
		var s string
		if json.Unmarshal(p.RuntimeValue.Constant, &s) == nil {
			return s, nil
		}
	}
	return "", &InputParameter{ComponentInputParameter: p.ComponentInputParameter, TaskOutputParameter: p.TaskOutputParameter, RuntimeValue: p.RuntimeValue}
}

// platformNameRefs are the executor's objects named by a parameter, by
// the key "<setting> <index>".
func platformNameRefs(cfg *kubernetesConfig) map[string]*InputParameter {
	refs := map[string]*InputParameter{}
	add := func(setting string, i int, constant string, p *nameParameter) {
		if _, in := nameOf(constant, p); in != nil {
			refs[setting+" "+strconv.Itoa(i)] = in
		}
	}
	for i, s := range cfg.SecretAsEnv {
		add("secretAsEnv", i, s.SecretName, s.SecretNameParameter)
	}
	for i, s := range cfg.SecretAsVolume {
		add("secretAsVolume", i, s.SecretName, s.SecretNameParameter)
	}
	for i, s := range cfg.ConfigMapAsEnv {
		add("configMapAsEnv", i, s.ConfigMapName, s.ConfigMapNameParameter)
	}
	for i, s := range cfg.ConfigMapAsVolume {
		add("configMapAsVolume", i, s.ConfigMapName, s.ConfigMapNameParameter)
	}
	for i, r := range cfg.PvcMount {
		add("pvcMount", i, r.Constant, r.nameParameter())
	}
	return refs
}

// executorConfig reads the executor's kfp-kubernetes config leniently
// (parsePlatform reports a malformed document).
func executorConfig(platformSpec json.RawMessage, label string) *kubernetesConfig {
	var doc struct {
		Platforms struct {
			Kubernetes struct {
				DeploymentSpec struct {
					Executors map[string]*kubernetesConfig `json:"executors"`
				} `json:"deploymentSpec"`
			} `json:"kubernetes"`
		} `json:"platforms"`
	}
	if len(platformSpec) == 0 || json.Unmarshal(platformSpec, &doc) != nil {
		return nil
	}
	return doc.Platforms.Kubernetes.DeploymentSpec.Executors[label]
}

// bindPlatformNames binds, in the task's scope, the parameters naming the
// objects its executor's config uses.
func (f *flattener) bindPlatformNames(s flatScope, key, label string) (map[string]*InputParameter, error) {
	cfg := executorConfig(f.spec.PlatformSpec, label)
	if cfg == nil {
		return nil, nil
	}
	bound := map[string]*InputParameter{}
	refs := platformNameRefs(cfg)
	for _, ref := range sortedKeys(refs) {
		v, err := f.param(s, key, ref, refs[ref])
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("task %q: kfp-kubernetes %s names its object by an input with no value", key, ref)
		}
		bound[ref] = v
	}
	return bound, nil
}

// objectName is the name of the object the setting ref names: the
// constant, or a TaskSpec param set from the bound parameter.
func (c *compiler) objectName(b *taskBuild, ref, kind, constant string, p *nameParameter) (string, error) {
	task := b.name
	name, in := nameOf(constant, p)
	foreign := c.opts.TenantNamespace != "" && c.opts.TenantNamespace != c.opts.Namespace
	if in == nil {
		if name == "" {
			return "", fmt.Errorf("task %q: kfp-kubernetes %s names no %s", task, ref, kind)
		}
		if foreign {
			return "", unsupported(task, "kfp-kubernetes "+kind+" of another namespace",
				"%s %q: the runs of this %s pipeline execute in %s, whose %ss are not the pipeline's", kind, name, c.opts.TenantNamespace, c.opts.Namespace, kind)
		}
		return name, nil
	}
	bound := b.t.platformNames[ref]
	if bound == nil {
		return "", fmt.Errorf("task %q: kfp-kubernetes %s: its name's parameter was not bound", task, ref)
	}
	if bound.loopItem != nil || bound.collected != nil || bound.collectedFrom != nil {
		return "", unsupported(task, "kfp-kubernetes name from a loop's item or collected outputs", "%s", ref)
	}
	if foreign && !(kind == "PersistentVolumeClaim" && c.madeByCreatePVC(bound)) {
		return "", unsupported(task, "kfp-kubernetes "+kind+" of another namespace",
			"%s names it by a parameter (only a claim the pipeline's own CreatePVC task made may be); the runs execute in %s", ref, c.opts.Namespace)
	}
	v, producer, err := c.inputValue(task, ref, bound, "STRING")
	if err != nil {
		return "", err
	}
	param := paramNameOf(ref)
	b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: param, Type: tektonv1.ParamTypeString,
		Description: "the name of the " + kind + " of kfp-kubernetes " + ref})
	b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: param, Value: *tektonv1.NewStructuredValues(v)})
	if producer != "" {
		b.after[producer] = true
	}
	return "$(params." + param + ")", nil
}

// paramNameOf is the TaskSpec param of setting ref ("secretAsEnv 0" →
// kfp-secretAsEnv-0).
func paramNameOf(ref string) string {
	return "kfp-" + strings.Replace(ref, " ", "-", 1)
}

// madeByCreatePVC: the parameter is the output "name" of a CreatePVC task.
func (c *compiler) madeByCreatePVC(in *InputParameter) bool {
	src := in.TaskOutputParameter
	if src == nil || src.OutputParameterKey != "name" {
		return false
	}
	p := c.flat[src.ProducerTask]
	if p == nil {
		return false
	}
	comp := c.spec.Components[p.ComponentRef.Name]
	if comp == nil {
		return false
	}
	e := c.spec.DeploymentSpec.Executors[comp.ExecutorLabel]
	return e != nil && e.Container != nil && pvcStub(e.Container) == CreatePVCImage
}
