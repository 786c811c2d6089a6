package kfpir

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
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
// step needs the API: the task is listed in contract.AnnotationPVCTasks, and whoever
// starts a run gives those tasks (and no other) an account that may manage
// PVCs there (the Tekton provider: its pvcServiceAccount). Claims are
// labelled with contract.LabelPVCOwner, the namespace whose pipeline made them, and
// delete refuses a claim its namespace's runs did not make.
//
// A task mounts such a claim with pvcMount by parameter (the create task's
// output "name", a pipeline input, any task output): a TaskSpec param
// named in the volume's claimName, which Tekton substitutes when the
// TaskRun starts, set by the PipelineTask to $(tasks.….results.…) or
// $(params.…). A pipeline whose runs execute in another namespace may
// mount by parameter only a claim its own create task made.

const (
	// CreatePVCImage is the stub image of the SDK's CreatePVC component.
	CreatePVCImage = "argostub/createpvc"
	// DeletePVCImage is the stub image of the SDK's DeletePVC component.
	DeletePVCImage = "argostub/deletepvc"
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
	setAnnotation(p, contract.AnnotationPVCTasks, string(data))
	return nil
}

// pvcMountRef is one pvcMount entry: a claim by name or by parameter
// (platformnames.go).
type pvcMountRef struct {
	Constant                string               `json:"constant"`
	ComponentInputParameter string               `json:"componentInputParameter"`
	TaskOutputParameter     *TaskOutputParameter `json:"taskOutputParameter"`
	PvcNameParameter        *nameParameter       `json:"pvcNameParameter"`
	MountPath               string               `json:"mountPath"`
	SubPath                 string               `json:"subPath"`
}

// nameParameter is the parameter naming the claim, the deprecated fields
// first (the SDK writes both).
func (r pvcMountRef) nameParameter() *nameParameter {
	if r.ComponentInputParameter != "" || r.TaskOutputParameter != nil {
		return &nameParameter{ComponentInputParameter: r.ComponentInputParameter, TaskOutputParameter: r.TaskOutputParameter}
	}
	return r.PvcNameParameter
}

// mountClaims mounts the claims the task's pvcMount entries name.
func (c *compiler) mountClaims(b *taskBuild, cfg *kubernetesConfig, main *tektonv1.Step) error {
	for i, r := range cfg.PvcMount {
		if r.SubPath != "" {
			return unsupported(b.name, "kfp-kubernetes PVC sub path", "pvcMount %d", i)
		}
		name, err := c.objectName(b, "pvcMount "+strconv.Itoa(i), "PersistentVolumeClaim", r.Constant, r.nameParameter())
		if err != nil {
			return err
		}
		src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
		if err := mountVolume(b.name, "kfp-pvc-", i, src, r.MountPath, &b.ts, main); err != nil {
			return err
		}
	}
	return nil
}
