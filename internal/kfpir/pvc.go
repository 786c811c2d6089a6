package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
)

// PVCs the pipeline creates and deletes (kfp-kubernetes CreatePVC and
// DeletePVC). The SDK compiles them into tasks whose executor is a stub
// container: image CreatePVCImage or DeletePVCImage, no command, the
// claim's settings as input parameters (access_modes, size, pvc_name or
// pvc_name_suffix, storage_class_name, volume_name, annotations; DeletePVC
// pvc_name) and, for CreatePVC, the claim's name as output parameter
// "name". Each becomes a task of one step in Options.LauncherImage running
// `kfp-task pvc create|delete` with those values, which makes or deletes
// the claim in the namespace the run executes in (the pod's own). That
// step needs the API: the task is listed in AnnotationPVCTasks, and whoever
// starts a run gives those tasks (and no other) an account that may manage
// PVCs there (the Tekton provider: its pvcServiceAccount). Claims are
// labelled with PVCOwnerLabel, the namespace whose pipeline made them, and
// delete refuses a claim its namespace's runs did not make.
//
// A task mounts such a claim with pvcMount by parameter (the create task's
// output "name", a pipeline input, any task output): a TaskSpec param
// named in the volume's claimName, which Tekton substitutes when the
// TaskRun starts, set by the PipelineTask to $(tasks.….results.…) or
// $(params.…). A pipeline whose runs execute in another namespace may
// mount by parameter only a claim its own create task made.

const (
	// CreatePVCImage and DeletePVCImage are the stub images of the SDK's
	// CreatePVC and DeletePVC components.
	CreatePVCImage = "argostub/createpvc"
	DeletePVCImage = "argostub/deletepvc"
	// AnnotationPVCTasks lists, as a JSON array, the Tekton names of the
	// tasks that create or delete claims and so need an account that may.
	AnnotationPVCTasks = "pipelines.kubeflow.org/pvc-tasks"
	// PVCOwnerLabel on a claim a create task made is the namespace whose
	// pipeline made it; PVCRunLabel the PipelineRun.
	PVCOwnerLabel = "pipelines.kubeflow.org/pvc-owner"
	PVCRunLabel   = "pipelines.kubeflow.org/pvc-run"
)

// pvcInputs are the stubs' input parameters, each passed to kfp-task pvc
// as the flag of the same name (with dashes).
var pvcInputs = map[string]map[string]bool{
	CreatePVCImage: {"access_modes": true, "size": true, "pvc_name": true, "pvc_name_suffix": true,
		"storage_class_name": true, "volume_name": true, "annotations": true},
	DeletePVCImage: {"pvc_name": true},
}

// pvcStub says whether exec is a CreatePVC or DeletePVC stub.
func pvcStub(exec *ContainerSpec) string {
	if _, ok := pvcInputs[exec.Image]; ok && len(exec.Command) == 0 && len(exec.Args) == 0 {
		return exec.Image
	}
	return ""
}

// pvcStep makes the stub task's only step, kfp-task pvc create|delete.
func (b *taskBuild) pvcStep() error {
	c, name := b.c, b.name
	if c.opts.LauncherImage == "" {
		return fmt.Errorf("task %q creates or deletes a PVC: Options.LauncherImage (an image with %s) is required", name, LauncherPath)
	}
	owner := firstNonEmpty(c.opts.TenantNamespace, c.opts.Namespace)
	if owner == "" {
		return fmt.Errorf("task %q creates or deletes a PVC: Options.Namespace is required (the claims' owner)", name)
	}
	if c.platform[b.comp.ExecutorLabel] != nil {
		return unsupported(name, "kfp-kubernetes settings on a CreatePVC or DeletePVC task", "executor %s", b.comp.ExecutorLabel)
	}
	verb := "create"
	if b.stub == DeletePVCImage {
		verb = "delete"
	}
	args := []string{"pvc", verb, "--owner", owner}
	if verb == "create" {
		res, ok := c.results[name]["name"]
		if !ok {
			return fmt.Errorf("task %q: CreatePVC has no output parameter \"name\"", name)
		}
		args = append(args, "--run", "$(context.pipelineRun.name)", "--result", "$(results."+res+".path)")
	}
	declared := map[string]bool{}
	for _, ps := range b.ts.Params {
		declared[ps.Name] = true
	}
	for _, key := range sortedKeys(b.in.Parameters) {
		if !pvcInputs[b.stub][key] {
			return unsupported(name, "CreatePVC/DeletePVC input "+key, "executor %s", b.comp.ExecutorLabel)
		}
		if p := b.local[key]; declared[p] {
			args = append(args, "--"+strings.ReplaceAll(key, "_", "-"), "$(params."+p+")")
		}
	}
	b.ts.Workspaces = nil // the step needs no artifacts
	b.ts.Steps = []tektonv1.Step{{Name: MainStep, Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args}}
	c.pvcTasks = append(c.pvcTasks, c.taskNames[name])
	return nil
}

// annotatePVCTasks lists the tasks that need an account managing PVCs.
func (c *compiler) annotatePVCTasks(p *tektonv1.Pipeline) error {
	if len(c.pvcTasks) == 0 {
		return nil
	}
	data, err := json.Marshal(c.pvcTasks)
	if err != nil {
		return err
	}
	setAnnotation(p, AnnotationPVCTasks, string(data))
	return nil
}

// pvcMountRef is one pvcMount entry: a claim by name (constant, or
// pvcNameParameter's constant) or by parameter.
type pvcMountRef struct {
	Constant                string               `json:"constant"`
	ComponentInputParameter string               `json:"componentInputParameter"`
	TaskOutputParameter     *TaskOutputParameter `json:"taskOutputParameter"`
	PvcNameParameter        *struct {
		ComponentInputParameter string               `json:"componentInputParameter"`
		TaskOutputParameter     *TaskOutputParameter `json:"taskOutputParameter"`
		RuntimeValue            *RuntimeValue        `json:"runtimeValue"`
	} `json:"pvcNameParameter"`
	MountPath string `json:"mountPath"`
	SubPath   string `json:"subPath"`
}

// claim is the constant name, or the parameter naming the claim.
func (r pvcMountRef) claim() (string, *InputParameter) {
	if r.Constant != "" {
		return r.Constant, nil
	}
	if r.ComponentInputParameter != "" || r.TaskOutputParameter != nil {
		return "", &InputParameter{ComponentInputParameter: r.ComponentInputParameter, TaskOutputParameter: r.TaskOutputParameter}
	}
	if p := r.PvcNameParameter; p != nil {
		if p.RuntimeValue != nil {
			var s string
			if json.Unmarshal(p.RuntimeValue.Constant, &s) == nil {
				return s, nil
			}
		}
		return "", &InputParameter{ComponentInputParameter: p.ComponentInputParameter, TaskOutputParameter: p.TaskOutputParameter, RuntimeValue: p.RuntimeValue}
	}
	return "", nil
}

// pvcMountRefs reads the pvcMount entries of executor label from the
// platform spec, leniently (parsePlatform reports a malformed document).
func pvcMountRefs(platformSpec json.RawMessage, label string) []pvcMountRef {
	var doc struct {
		Platforms struct {
			Kubernetes struct {
				DeploymentSpec struct {
					Executors map[string]struct {
						PvcMount []pvcMountRef `json:"pvcMount"`
					} `json:"executors"`
				} `json:"deploymentSpec"`
			} `json:"kubernetes"`
		} `json:"platforms"`
	}
	if len(platformSpec) == 0 || json.Unmarshal(platformSpec, &doc) != nil {
		return nil
	}
	return doc.Platforms.Kubernetes.DeploymentSpec.Executors[label].PvcMount
}

// bindPVCClaims binds, in the task's scope, the parameters naming the
// claims its executor mounts (by the pvcMount's index).
func (f *flattener) bindPVCClaims(s flatScope, key, label string) (map[string]*InputParameter, error) {
	claims := map[string]*InputParameter{}
	for i, r := range pvcMountRefs(f.spec.PlatformSpec, label) {
		_, in := r.claim()
		if in == nil {
			continue
		}
		v, err := f.param(s, key, "pvcMount "+strconv.Itoa(i), in)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("task %q: pvcMount %d names its claim by an input with no value", key, i)
		}
		claims[strconv.Itoa(i)] = v
	}
	return claims, nil
}

// mountClaims mounts the claims the task's pvcMount entries name, by
// name or by parameter.
func (c *compiler) mountClaims(task string, cfg *kubernetesConfig, refuseForeign func(string, string) error, b *taskBuild, main *tektonv1.Step) error {
	for i, r := range cfg.PvcMount {
		name, in := r.claim()
		if r.SubPath != "" {
			return unsupported(task, "kfp-kubernetes PVC sub path", "pvcMount %d", i)
		}
		src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
		switch {
		case name != "":
			if err := refuseForeign("PersistentVolumeClaim", name); err != nil {
				return err
			}
		case in == nil:
			return fmt.Errorf("task %q: pvcMount %d names no claim", task, i)
		default:
			bound := b.t.pvcClaims[strconv.Itoa(i)]
			if bound == nil {
				return fmt.Errorf("task %q: pvcMount %d: its claim's parameter was not bound", task, i)
			}
			if bound.loopItem != nil || bound.collected != nil || bound.collectedFrom != nil {
				return unsupported(task, "kfp-kubernetes PVC named by a loop's item or collected outputs", "pvcMount %d", i)
			}
			if err := c.foreignClaim(task, i, bound, refuseForeign); err != nil {
				return err
			}
			v, producer, err := c.inputValue(task, "pvcMount "+strconv.Itoa(i), bound, "STRING")
			if err != nil {
				return err
			}
			param := "kfp-pvc-" + strconv.Itoa(i)
			b.ts.Params = append(b.ts.Params, tektonv1.ParamSpec{Name: param, Type: tektonv1.ParamTypeString,
				Description: "the name of the PersistentVolumeClaim mounted at " + r.MountPath})
			b.pt.Params = append(b.pt.Params, tektonv1.Param{Name: param, Value: *tektonv1.NewStructuredValues(v)})
			src.PersistentVolumeClaim.ClaimName = "$(params." + param + ")"
			if producer != "" {
				b.after[producer] = true
			}
		}
		if err := mountVolume(task, "kfp-pvc-", i, src, r.MountPath, &b.ts, main); err != nil {
			return err
		}
	}
	return nil
}

// foreignClaim: a pipeline whose runs execute in another namespace may
// mount by parameter only the claim its own CreatePVC task made.
func (c *compiler) foreignClaim(task string, i int, in *InputParameter, refuseForeign func(string, string) error) error {
	if refuseForeign("PersistentVolumeClaim", "") == nil {
		return nil
	}
	if src := in.TaskOutputParameter; src != nil && src.OutputParameterKey == "name" {
		if p := c.flat[src.ProducerTask]; p != nil {
			if comp := c.spec.Components[p.ComponentRef.Name]; comp != nil {
				if e := c.spec.DeploymentSpec.Executors[comp.ExecutorLabel]; e != nil && e.Container != nil && pvcStub(e.Container) == CreatePVCImage {
					return nil
				}
			}
		}
	}
	return unsupported(task, "kfp-kubernetes PVC of another namespace", "pvcMount %d names its claim by a parameter that is not the output of the pipeline's own CreatePVC task; the runs execute in %s", i, c.opts.Namespace)
}
