package kfpir

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func claimOf(t *testing.T, pt tektonv1.PipelineTask, mountPath string) string {
	t.Helper()
	main := step(t, pt, MainStep)
	for _, m := range main.VolumeMounts {
		if m.MountPath != mountPath {
			continue
		}
		for _, v := range pt.TaskSpec.Volumes {
			if v.Name == m.Name {
				require.NotNil(t, v.PersistentVolumeClaim, "volume %s", v.Name)
				return v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	t.Fatalf("task %s mounts nothing at %s", pt.Name, mountPath)
	return ""
}

// TestPVCCreateMountDelete: CreatePVC and DeletePVC become kfp-task pvc
// steps listed for the PVC account; mounts by the create task's output
// and by a pipeline input are params in the volume's claimName.
func TestPVCCreateMountDelete(t *testing.T) {
	p := compileValid(t, load(t, "pvc_create_mount_delete.yaml"), Options{Name: "x", Namespace: "team-a", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)

	create := tasks["createpvc"]
	require.Len(t, create.TaskSpec.Steps, 1)
	s := create.TaskSpec.Steps[0]
	assert.Equal(t, launcherImage, s.Image)
	assert.Equal(t, []string{LauncherPath}, s.Command)
	args := strings.Join(s.Args, " ")
	assert.True(t, strings.HasPrefix(args, "pvc create --owner team-a --run $(context.pipelineRun.name) --result $(results.name.path)"), args)
	assert.Contains(t, args, "--access-modes $(params.access_modes)")
	assert.Contains(t, args, "--pvc-name-suffix $(params.pvc_name_suffix)")
	assert.Contains(t, args, "--size $(params.size)")
	assert.Contains(t, args, "--storage-class-name $(params.storage_class_name)", "a default is passed")
	assert.NotContains(t, args, "--pvc-name ", "an optional input not given is not passed")
	assert.NotContains(t, args, "--volume-name")
	assert.Equal(t, `["ReadWriteOnce"]`, paramValue(create, "access_modes"))
	assert.Empty(t, create.Workspaces, "no artifacts volume in the pod holding the PVC account")
	assert.Empty(t, create.TaskSpec.Workspaces)

	del := tasks["deletepvc"]
	assert.Equal(t, []string{"pvc", "delete", "--owner", "team-a", "--pvc-name", "$(params.pvc_name)"}, del.TaskSpec.Steps[0].Args)
	assert.Equal(t, "$(tasks.createpvc.results.name)", paramValue(del, "pvc_name"))

	var pvcTasks []string
	require.NoError(t, json.Unmarshal([]byte(p.Annotations[contract.AnnotationPVCTasks]), &pvcTasks))
	assert.Equal(t, []string{"createpvc", "deletepvc"}, pvcTasks)

	writer := tasks["writer"]
	assert.Equal(t, "$(params.kfp-pvcMount-0)", claimOf(t, writer, "/scratch"))
	assert.Equal(t, "$(tasks.createpvc.results.name)", paramValue(writer, "kfp-pvcMount-0"))
	assert.Contains(t, writer.RunAfter, "createpvc")
	reader := tasks["reader"]
	assert.Equal(t, "$(params.kfp-pvcMount-0)", claimOf(t, reader, "/data"))
	assert.Equal(t, "$(params.kfp-pvcMount-1)", claimOf(t, reader, "/datasets"))
	assert.Equal(t, "$(params.data_claim)", paramValue(reader, "kfp-pvcMount-1"))
}

// TestPVCRefusals: what a PVC task or a mount by parameter may not do.
func TestPVCRefusals(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(s *PipelineSpec)
		opts    Options
		feature string
		err     string
	}{
		{name: "another namespace's runs mount the pipeline's own claim",
			opts: Options{Name: "x", Namespace: "workflows", TenantNamespace: "team-a", LauncherImage: launcherImage},
			edit: func(s *PipelineSpec) {
				s.PlatformSpec = platformOf(`"exec-reader":{"pvcMount":[{"mountPath":"/data","taskOutputParameter":{"producerTask":"createpvc","outputParameterKey":"name"}}]}`)
			}},
		{name: "another namespace's runs mount a claim named by a pipeline input",
			opts: Options{Name: "x", Namespace: "workflows", TenantNamespace: "team-a", LauncherImage: launcherImage},
			edit: func(s *PipelineSpec) {
				s.PlatformSpec = platformOf(`"exec-reader":{"pvcMount":[{"mountPath":"/data","componentInputParameter":"data_claim"}]}`)
			},
			feature: "kfp-kubernetes PersistentVolumeClaim of another namespace"},
		{name: "settings on the create task",
			edit: func(s *PipelineSpec) {
				s.PlatformSpec = platformOf(`"exec-createpvc":{"secretAsEnv":[{"secretName":"s","keyToEnv":[{"secretKey":"k","envVar":"K"}]}]}`)
			},
			feature: "kfp-kubernetes settings on a CreatePVC or DeletePVC task"},
		{name: "sub path",
			edit: func(s *PipelineSpec) {
				s.PlatformSpec = platformOf(`"exec-reader":{"pvcMount":[{"mountPath":"/data","constant":"c","subPath":"x"}]}`)
			},
			feature: "kfp-kubernetes PVC sub path"},
		{name: "an input the stub does not take",
			edit: func(s *PipelineSpec) {
				s.Components["comp-deletepvc"].InputDefinitions.Parameters["grace"] = &ParameterSpec{ParameterType: "STRING", IsOptional: true}
			},
			feature: "CreatePVC/DeletePVC input grace"},
		{name: "no namespace to own the claims", opts: Options{Name: "x", LauncherImage: launcherImage},
			err: "Options.Namespace is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := load(t, "pvc_create_mount_delete.yaml")
			if tc.edit != nil {
				tc.edit(spec)
			}
			opts := tc.opts
			if opts.Name == "" {
				opts = Options{Name: "x", Namespace: "team-a", LauncherImage: launcherImage}
			}
			if tc.feature == "" && tc.err == "" {
				compileValid(t, spec, opts)
				return
			}
			_, err := Compile(spec, opts)
			require.Error(t, err)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			var ue *UnsupportedError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.Equal(t, tc.feature, ue.Feature)
		})
	}
}

func platformOf(executors string) json.RawMessage {
	return json.RawMessage(`{"platforms":{"kubernetes":{"deploymentSpec":{"executors":{` + executors + `}}}}}`)
}

// TestPVCMountConstantParameter: pvcNameParameter holding a constant is
// a claim by name.
func TestPVCMountConstantParameter(t *testing.T) {
	spec := load(t, "pvc_create_mount_delete.yaml")
	spec.PlatformSpec = platformOf(`"exec-reader":{"pvcMount":[{"mountPath":"/data","pvcNameParameter":{"runtimeValue":{"constant":"fixed"}}}]}`)
	p := compileValid(t, spec, Options{Name: "x", Namespace: "team-a", LauncherImage: launcherImage})
	assert.Equal(t, "fixed", claimOf(t, byName(p.Spec.Tasks)["reader"], "/data"), "a constant pvcNameParameter is a name")
}

// TestPVCMountInAConditionGroup: a task in a dsl.If group mounts the
// claim through the group's input, as the SDK passes a channel into a
// group (pipelinechannel--createpvc-name); it is bound in the group's
// scope to the create task's output.
func TestPVCMountInAConditionGroup(t *testing.T) {
	spec := load(t, "pvc_create_mount_delete.yaml")
	channel := "pipelinechannel--createpvc-name"
	reader := spec.Root.DAG.Tasks["reader"]
	reader.DependentTasks = nil
	spec.Components["comp-condition-1"] = &ComponentSpec{
		InputDefinitions: &IODefinitions{Parameters: map[string]*ParameterSpec{channel: {ParameterType: "STRING"}}},
		DAG:              &DAGSpec{Tasks: map[string]*TaskSpec{"reader": reader}},
	}
	delete(spec.Root.DAG.Tasks, "reader")
	spec.Root.DAG.Tasks["condition-1"] = &TaskSpec{
		TaskInfo: TaskInfo{Name: "condition-1"}, ComponentRef: ComponentRef{Name: "comp-condition-1"},
		DependentTasks: []string{"createpvc", "writer"},
		Inputs: &TaskInputs{Parameters: map[string]*InputParameter{
			channel: {TaskOutputParameter: &TaskOutputParameter{ProducerTask: "createpvc", OutputParameterKey: "name"}}}},
		TriggerPolicy: &TriggerPolicy{Condition: "inputs.parameter_values['" + channel + "'] != ''"},
	}
	spec.Root.DAG.Tasks["deletepvc"].DependentTasks = []string{"createpvc", "condition-1"}
	spec.PlatformSpec = platformOf(`"exec-reader":{"pvcMount":[{"mountPath":"/data","componentInputParameter":"` + channel + `",
		"pvcNameParameter":{"componentInputParameter":"` + channel + `"}}]}`)
	for _, opts := range []Options{
		{Name: "x", Namespace: "team-a", LauncherImage: launcherImage},
		{Name: "x", Namespace: "workflows", TenantNamespace: "team-a", LauncherImage: launcherImage},
	} {
		p := compileValid(t, spec, opts)
		var r tektonv1.PipelineTask
		for name, pt := range byName(p.Spec.Tasks) {
			if pt.DisplayName == "reader" {
				r = pt
				t.Logf("reader is %s", name)
			}
		}
		require.NotNil(t, r.TaskSpec, "the reader is compiled")
		assert.Equal(t, "$(params.kfp-pvcMount-0)", claimOf(t, r, "/data"))
		assert.Equal(t, "$(tasks.createpvc.results.name)", paramValue(r, "kfp-pvcMount-0"), "another namespace's runs too: it is the pipeline's own claim")
		assert.NotEmpty(t, r.When, "guarded by the group's condition")
	}
}
