package kfpir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
)

func byName(tasks []tektonv1.PipelineTask) map[string]tektonv1.PipelineTask {
	out := map[string]tektonv1.PipelineTask{}
	for _, t := range tasks {
		out[t.Name] = t
	}
	return out
}

func whenInputs(t tektonv1.PipelineTask) []string {
	var out []string
	for _, w := range t.When {
		out = append(out, w.Input+" "+string(w.Operator)+" "+w.Values[0])
	}
	return out
}

// TestConditionGroupsInline: a group's tasks become Pipeline tasks; the
// group's condition guards each; its input is the producer's result.
func TestConditionGroupsInline(t *testing.T) {
	p := compileValid(t, load(t, "condition_group.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	require.Len(t, tasks, 2, "flip and the group's print-op; a string equality needs no condition task")
	print := tasks["print-op"]
	assert.Equal(t, []string{"$(tasks.flip.results.Output) in heads"}, whenInputs(print))
	assert.Equal(t, []string{"flip"}, print.RunAfter, "the group's dependency passes to its tasks")
	assert.Equal(t, "$(tasks.flip.results.Output)", print.Params[0].Value.StringVal, "the group's input is the producer's result")
}

// TestIfElifElseAndNestedGroups: every branch of the chain is guarded by
// a condition task that evaluates the SDK's CEL; a group nested in a
// branch is guarded by both; a pipeline used as a component is inlined
// with its default, and its dag.outputs lead to the task inside.
func TestIfElifElseAndNestedGroups(t *testing.T) {
	p := compileValid(t, load(t, "control_flow.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	gate := func(name string) string { return "$(tasks." + name + ".results.outcome) in true" }
	assert.Equal(t, []string{"$(tasks.flip.results.Output) in heads"}, whenInputs(tasks["print-heads"]), "if: a plain string equality")
	assert.Equal(t, []string{gate("condition-3")}, whenInputs(tasks["roll"]), "elif: decided by its condition task")
	assert.Equal(t, []string{gate("condition-3"), gate("condition-5")}, whenInputs(tasks["print-high"]), "nested: both conditions, outermost first")
	assert.Equal(t, []string{gate("condition-4")}, whenInputs(tasks["print-other"]), "else")
	assert.Equal(t, []string{gate("condition-3")}, whenInputs(tasks["condition-5"]), "a nested condition task is guarded by the outer")
	assert.ElementsMatch(t, []string{"flip", "roll"}, tasks["print-high"].RunAfter)

	elif := tasks["condition-3"]
	args := elif.TaskSpec.Steps[0].Args
	assert.Equal(t, LauncherPath, elif.TaskSpec.Steps[0].Command[0])
	assert.Equal(t, []string{"condition", "--condition",
		"!(inputs.parameter_values['pipelinechannel--flip-Output'] == 'heads') && inputs.parameter_values['pipelinechannel--flip-Output'] == 'tails'",
		"--result", "$(results.outcome.path)",
		"--param", "pipelinechannel--flip-Output", "STRING", "$(params.pipelinechannel--flip-Output)"}, args)
	assert.Equal(t, "$(tasks.flip.results.Output)", elif.Params[0].Value.StringVal)
	five := tasks["condition-5"].TaskSpec.Steps[0].Args
	assert.Equal(t, []string{"--param", "pipelinechannel--roll-Output", "NUMBER_INTEGER", "$(params.pipelinechannel--roll-Output)"}, five[len(five)-4:])

	// The chain is exclusive: for each value the SDK's own conditions,
	// evaluated as the condition tasks do, pick exactly one branch.
	conds := map[string]string{}
	for _, name := range []string{"condition-3", "condition-4"} {
		conds[name] = tasks[name].TaskSpec.Steps[0].Args[2]
	}
	for flip, want := range map[string]string{"heads": "condition-2", "tails": "condition-3", "edge": "condition-4"} {
		in := map[string]*structpb.Value{"pipelinechannel--flip-Output": structpb.NewStringValue(flip)}
		got := map[string]bool{"condition-2": flip == "heads"}
		for name, cond := range conds {
			ok, err := kfpcel.Condition(cond, in)
			require.NoError(t, err)
			got[name] = ok
		}
		for name, ok := range got {
			assert.Equal(t, name == want, ok, "%s for %s", name, flip)
		}
	}

	shout := tasks["shout"]
	params := map[string]string{}
	for _, p := range shout.Params {
		params[p.Name] = p.Value.StringVal
	}
	assert.Equal(t, map[string]string{"msg": "$(params.greeting)", "times": "2"}, params, "the inner pipeline's input and its default")
	assert.Equal(t, "$(tasks.shout.results.Output)", tasks["report"].Params[0].Value.StringVal, "dag.outputs lead to the inner task")
	assert.ElementsMatch(t, []string{"print-heads", "print-high", "print-other", "roll"}, tasks["shout"].RunAfter, "after every task of the group it depends on")
	assert.Equal(t, "$(tasks.shout.results.Output)", p.Spec.Results[0].Value.StringVal, "the pipeline's output through the inner pipeline")
}

// TestExitHandlers: the exit task and an ignore_upstream_failure task run
// in finally; the exit task sees the group's status as KFP's
// PipelineTaskFinalStatus and runs under the launcher.
func TestExitHandlers(t *testing.T) {
	p := compileValid(t, load(t, "exit_handler.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	assert.ElementsMatch(t, []string{"fail", "work"}, names(p.Spec.Tasks))
	assert.ElementsMatch(t, []string{"after-work", "cleanup"}, names(p.Spec.Finally))
	cleanup := byName(p.Spec.Finally)["cleanup"]
	assert.Empty(t, cleanup.RunAfter)
	var status string
	for _, param := range cleanup.Params {
		if param.Name == "status" {
			status = param.Value.StringVal
		}
	}
	var parsed map[string]any
	require.NoError(t, json.Unmarshal([]byte(status), &parsed))
	assert.Equal(t, "$(tasks.status)", parsed["state"])
	assert.Equal(t, "exit-handler-1", parsed["pipelineTaskName"])
	assert.Equal(t, MainStep, cleanup.TaskSpec.Steps[1].Name)
	assert.Equal(t, launchedBinary, cleanup.TaskSpec.Steps[1].Command[0], "a final status is given through the launcher")
}

func names(tasks []tektonv1.PipelineTask) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

func TestATaskAfterAnExitTaskIsRefused(t *testing.T) {
	spec := load(t, "exit_handler.yaml")
	spec.Root.DAG.Tasks["late"] = &TaskSpec{ComponentRef: ComponentRef{Name: "comp-echo"}, DependentTasks: []string{"after-work"}}
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "task after an exit task")
}

func TestAFinalStatusOutsideAnExitTaskIsRefused(t *testing.T) {
	spec := load(t, "exit_handler.yaml")
	spec.Root.DAG.Tasks["cleanup"].TriggerPolicy = nil
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "task final status in a task that is not an exit task")
}

func TestAComponentContainingItselfIsAnError(t *testing.T) {
	spec := load(t, "condition_group.yaml")
	spec.Components["comp-condition-1"].DAG.Tasks["again"] = &TaskSpec{ComponentRef: ComponentRef{Name: "comp-condition-1"}}
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "nested more than")
}

func TestAnAcceleratorIsALimit(t *testing.T) {
	spec := load(t, "demo.yaml")
	spec.DeploymentSpec.Executors["exec-train"].Container.Resources.Accelerator = raw(`{"resourceType":"nvidia.com/gpu","resourceCount":"2"}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	train := byName(p.Spec.Tasks)["train"]
	main := train.TaskSpec.Steps[len(train.TaskSpec.Steps)-1]
	gpu := main.ComputeResources.Limits["nvidia.com/gpu"]
	assert.Equal(t, "2", gpu.String())
}

// TestFStringsReferToOtherInputs: the SDK compiles f"Hello {name}" into a
// constant holding the placeholder of an input it also binds.
func TestFStringsReferToOtherInputs(t *testing.T) {
	spec := load(t, "loop_static.yaml")
	loop := spec.Components["comp-for-loop-2"]
	loop.InputDefinitions.Parameters["pipelinechannel--name"] = &ParameterSpec{ParameterType: "STRING"}
	echo := loop.DAG.Tasks["echo"]
	echo.Inputs.Parameters["msg"] = &InputParameter{RuntimeValue: &RuntimeValue{Constant: raw(`"{{$.inputs.parameters['pipelinechannel--loop-item-param-1']}} and {{$.inputs.parameters['pipelinechannel--name']}}."`)}}
	echo.Inputs.Parameters["pipelinechannel--name"] = &InputParameter{ComponentInputParameter: "pipelinechannel--name"}
	echo.Inputs.Parameters["pipelinechannel--loop-item-param-1"] = &InputParameter{ComponentInputParameter: "pipelinechannel--loop-item-param-1"}
	spec.Root.InputDefinitions = &IODefinitions{Parameters: map[string]*ParameterSpec{"name": {ParameterType: "STRING"}}}
	spec.Root.DAG.Tasks["for-loop-2"].Inputs = &TaskInputs{Parameters: map[string]*InputParameter{"pipelinechannel--name": {ComponentInputParameter: "name"}}}
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	require.Len(t, tasks, 2, "one task per item of the raw list")
	assert.Equal(t, "a and $(params.name).", tasks["for-loop-2-0-echo"].Params[0].Value.StringVal)
	assert.Equal(t, "b and $(params.name).", tasks["for-loop-2-1-echo"].Params[0].Value.StringVal)
}

// TestTheE2EPipelinesCompile compiles the e2e suite's control-flow and
// exit-handler pipelines, so a mistake in them shows before the node.
func TestTheE2EPipelinesCompile(t *testing.T) {
	for _, file := range []string{"control_flow.yaml", "exit_handler.yaml", "exit_pipeline.yaml", "secret_env.yaml", "importer.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", file))
		require.NoError(t, err)
		spec, err := Parse(data)
		require.NoError(t, err, file)
		compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	}
	data, err := os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", "pvc.yaml"))
	require.NoError(t, err)
	spec, err := Parse(data)
	require.NoError(t, err)
	pvc := compileValid(t, spec, Options{Name: "x", Namespace: "e2e", LauncherImage: launcherImage})
	assert.Equal(t, "$(params.kfp-pvcMount-0)", byName(pvc.Spec.Tasks)["look"].TaskSpec.Volumes[0].PersistentVolumeClaim.ClaimName)
	data, _ = os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", "control_flow.yaml"))
	spec, _ = Parse(data)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	square := tasks["square"]
	require.NotNil(t, square.Matrix, "the loop over make-list's output fans out")
	assert.Equal(t, "$(tasks.for-loop-5.results.items-0[*])", square.Matrix.Params[0].Value.StringVal)
	assert.Equal(t, []string{"items", "--list", "$(params.list)", "--result", "", "$(results.items-0.path)"}, tasks["for-loop-5"].TaskSpec.Steps[0].Args)
	assert.Equal(t, "$(tasks.make-list.results.Output)", tasks["for-loop-5"].Params[0].Value.StringVal)
	total := tasks["total"]
	assert.Equal(t, "$(tasks.square.results.Output[*])", total.Params[0].Value.StringVal, "Collected: the fanned-out results as an array")
	args := total.TaskSpec.Steps[1].Args
	assert.Equal(t, []string{"--", "$(params.nums[*])"}, args[len(args)-2:])
	assert.Contains(t, args, "nums=NUMBER_INTEGER")
	assert.Equal(t, "big $(params.n)", tasks["say-big"].Params[0].Value.StringVal, "an f-string")
}

// TestALoopOverAListKnownWhenCompilingIsUnrolled: one copy of the loop's
// tasks per item, iteration i after iteration i-parallelismLimit, and the
// collected outputs one param each, in order.
func TestALoopOverAListKnownWhenCompilingIsUnrolled(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", "control_flow.yaml"))
	require.NoError(t, err)
	spec, err := Parse(data)
	require.NoError(t, err)
	loop := spec.Root.DAG.Tasks["for-loop-5"]
	loop.ParameterIter = raw(`{"itemInput":"pipelinechannel--make-list-Output-loop-item","items":{"raw":"[10, 20, 30]"}}`)
	loop.IteratorPolicy = raw(`{"parallelismLimit":2}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	assert.NotContains(t, tasks, "for-loop-5", "no fan-out task")
	for i, x := range []string{"10", "20", "30"} {
		sq := tasks["for-loop-5-"+strconv.Itoa(i)+"-square"]
		require.NotNil(t, sq.TaskSpec, "iteration %d", i)
		assert.Nil(t, sq.Matrix)
		assert.Equal(t, x, sq.Params[0].Value.StringVal)
	}
	assert.Contains(t, tasks["for-loop-5-2-square"].RunAfter, "for-loop-5-0-square", "at most two at once")
	assert.NotContains(t, tasks["for-loop-5-1-square"].RunAfter, "for-loop-5-0-square")
	total := tasks["total"]
	var values []string
	for _, p := range total.Params {
		values = append(values, p.Value.StringVal)
	}
	assert.Equal(t, []string{"$(tasks.for-loop-5-0-square.results.Output)", "$(tasks.for-loop-5-1-square.results.Output)", "$(tasks.for-loop-5-2-square.results.Output)"}, values)
	args := strings.Join(total.TaskSpec.Steps[1].Args, " ")
	assert.Contains(t, args, "--item-type nums=NUMBER_INTEGER --item nums=$(params.nums-0) --item nums=$(params.nums-1) --item nums=$(params.nums-2)")
}

func TestLoopRefusals(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", "control_flow.yaml"))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		mutate  func(*PipelineSpec)
		feature string
	}{
		"parallelism over a run-time list": {func(s *PipelineSpec) {
			s.Root.DAG.Tasks["for-loop-5"].IteratorPolicy = raw(`{"parallelismLimit":2}`)
		}, "parallelism limit on a loop over a run-time list"},
		"too many items": {func(s *PipelineSpec) {
			s.Root.DAG.Tasks["for-loop-5"].ParameterIter = raw(`{"itemInput":"pipelinechannel--make-list-Output-loop-item","items":{"raw":"[` + strings.Repeat("1,", 200) + `1]"}}`)
		}, "more than 200 items"},
		"data between the loop's tasks": {func(s *PipelineSpec) {
			body := s.Components["comp-for-loop-5"].DAG.Tasks
			body["again"] = &TaskSpec{ComponentRef: ComponentRef{Name: "comp-square"}, Inputs: &TaskInputs{Parameters: map[string]*InputParameter{
				"x": {TaskOutputParameter: &TaskOutputParameter{ProducerTask: "square", OutputParameterKey: "Output"}}}}}
		}, "data passed between the tasks of a loop"},
	} {
		t.Run(name, func(t *testing.T) {
			spec, err := Parse(data)
			require.NoError(t, err)
			tc.mutate(spec)
			_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, ue.Feature, tc.feature)
		})
	}
}

// TestCachingTasksRunUnderTheLauncher: with a workspace that outlives the
// run, a task asking for caching is launched with the cache's flags, the
// run's switch and a result saying whether it was reused; without one,
// the Pipeline says the tasks run every time.
func TestCachingTasksRunUnderTheLauncher(t *testing.T) {
	p := compileValid(t, load(t, "demo.yaml"), Options{Name: "x", LauncherImage: launcherImage, Caching: true})
	train := byName(p.Spec.Tasks)["train"]
	args := strings.Join(train.TaskSpec.Steps[1].Args, " ")
	assert.Contains(t, args, "--cache-dir /kfp/artifacts/.kfp-cache --caching $(params.kfp-enable-caching) --image ")
	assert.Contains(t, args, "--cached-result $(results.kfp-cached.path)")
	var results []string
	for _, r := range train.TaskSpec.Results {
		results = append(results, r.Name)
	}
	assert.Contains(t, results, CachedResult)
	var param *tektonv1.ParamSpec
	for i := range p.Spec.Params {
		if p.Spec.Params[i].Name == CachingParam {
			param = &p.Spec.Params[i]
		}
	}
	require.NotNil(t, param, "a run switches caching with a Pipeline param")
	assert.Equal(t, "true", param.Default.StringVal)
	assert.Contains(t, p.Annotations[contract.AnnotationCaching], "on:")

	off := compileValid(t, load(t, "demo.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	assert.Contains(t, off.Annotations[contract.AnnotationCaching], "off: the artifacts volume does not outlive the run, so evaluate, generate, train run every time")
	for _, ps := range off.Spec.Params {
		assert.NotEqual(t, CachingParam, ps.Name)
	}

	spec := load(t, "demo.yaml")
	spec.Root.InputDefinitions.Parameters[CachingParam] = &ParameterSpec{ParameterType: "STRING"}
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage, Caching: true})
	assert.ErrorContains(t, err, "pipeline input named "+CachingParam)
}

// TestKubernetesSettings: kfp-kubernetes' settings, as the SDK writes the
// platform spec document, on the task's step, volumes and timeout, and its
// pod settings as the Pipeline's task run specs.
func TestKubernetesSettings(t *testing.T) {
	spec := load(t, "demo.yaml")
	spec.PlatformSpec = raw(`{"platforms":{"kubernetes":{"deploymentSpec":{"executors":{"exec-train":{
		"secretAsEnv":[{"secretName":"db","keyToEnv":[{"secretKey":"password","envVar":"DB_PASSWORD"}]}],
		"secretAsVolume":[{"secretName":"certs","mountPath":"/certs","optional":true}],
		"configMapAsEnv":[{"configMapName":"settings","keyToEnv":[{"configMapKey":"mode","envVar":"MODE"}]}],
		"configMapAsVolume":[{"configMapName":"settings","mountPath":"/settings"}],
		"pvcMount":[{"constant":"datasets","mountPath":"/data"}],
		"fieldPathAsEnv":[{"name":"POD","fieldPath":"metadata.name"}],
		"emptyDirMounts":[{"volumeName":"scratch","mountPath":"/scratch","medium":"Memory","sizeLimit":"1Gi"}],
		"enabledSharedMemory":{"volumeName":"shm","size":"2Gi"},
		"imagePullPolicy":"Always",
		"activeDeadlineSeconds":"600",
		"nodeSelector":{"labels":{"pool":"gpu"}},
		"tolerations":[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}],
		"podMetadata":{"labels":{"team":"ml"},"annotations":{"note":"x"}},
		"imagePullSecret":[{"secretName":"registry"}]}}}}}}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage, Namespace: "team-a", TenantNamespace: "team-a"})
	train := byName(p.Spec.Tasks)["train"]
	main := train.TaskSpec.Steps[len(train.TaskSpec.Steps)-1]
	env := map[string]corev1.EnvVarSource{}
	for _, e := range main.Env {
		if e.ValueFrom != nil {
			env[e.Name] = *e.ValueFrom
		}
	}
	assert.Equal(t, "password", env["DB_PASSWORD"].SecretKeyRef.Key)
	assert.Equal(t, "db", env["DB_PASSWORD"].SecretKeyRef.Name)
	assert.Equal(t, "settings", env["MODE"].ConfigMapKeyRef.Name)
	assert.Equal(t, "metadata.name", env["POD"].FieldRef.FieldPath)
	mounts := map[string]string{}
	for _, m := range main.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	vols := map[string]corev1.Volume{}
	for _, v := range train.TaskSpec.Volumes {
		vols[v.Name] = v
	}
	assert.Equal(t, "certs", vols[mounts["/certs"]].Secret.SecretName)
	assert.Equal(t, "settings", vols[mounts["/settings"]].ConfigMap.Name)
	assert.Equal(t, "datasets", vols[mounts["/data"]].PersistentVolumeClaim.ClaimName)
	assert.Equal(t, corev1.StorageMediumMemory, vols[mounts["/dev/shm"]].EmptyDir.Medium)
	assert.Equal(t, "1Gi", vols[mounts["/scratch"]].EmptyDir.SizeLimit.String())
	assert.Equal(t, corev1.PullAlways, main.ImagePullPolicy)
	assert.Equal(t, "10m0s", train.Timeout.Duration.String())

	var specs []tektonv1.PipelineTaskRunSpec
	require.NoError(t, json.Unmarshal([]byte(p.Annotations[contract.AnnotationTaskRunSpecs]), &specs))
	require.Len(t, specs, 1)
	assert.Equal(t, "train", specs[0].PipelineTaskName)
	assert.Equal(t, map[string]string{"pool": "gpu"}, specs[0].PodTemplate.NodeSelector)
	assert.Equal(t, "registry", specs[0].PodTemplate.ImagePullSecrets[0].Name)
	assert.Equal(t, corev1.TolerationOpExists, specs[0].PodTemplate.Tolerations[0].Operator)
	assert.Equal(t, map[string]string{"team": "ml"}, specs[0].Metadata.Labels)
}

// TestPipelineInputAndOutputArtifacts: an input artifact of the pipeline
// is a param holding its URI (empty by default when optional: absent),
// given to the tasks taking it through the launcher; an output artifact
// of the pipeline is its producer's.
func TestPipelineInputAndOutputArtifacts(t *testing.T) {
	spec := load(t, "demo.yaml")
	spec.Root.InputDefinitions.Artifacts = map[string]*ArtifactSpec{
		"model": {ArtifactType: ArtifactType{SchemaTitle: "system.Model"}},
		"extra": {ArtifactType: ArtifactType{SchemaTitle: "system.Dataset"}, IsOptional: true},
	}
	spec.Root.DAG.Tasks["evaluate"].Inputs.Artifacts["model"] = &InputArtifact{ComponentInputArtifact: "model"}
	spec.Root.DAG.Outputs.Artifacts = map[string]json.RawMessage{"model": raw(`{"artifactSelectors":[{"producerSubtask":"train","outputArtifactKey":"model"}]}`)}
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	params := map[string]tektonv1.ParamSpec{}
	for _, ps := range p.Spec.Params {
		params[ps.Name] = ps
	}
	assert.Nil(t, params["model"].Default, "a required input artifact")
	assert.Equal(t, "", params["extra"].Default.StringVal, "an optional one is absent unless given")
	assert.Contains(t, params["model"].Description, "system.Model")
	evaluate := byName(p.Spec.Tasks)["evaluate"]
	assert.Contains(t, evaluate.TaskSpec.Steps[1].Args, "model=$(params.model)", "through the launcher, which knows the path from the URI")

	spec.Root.DAG.Outputs.Artifacts["model"] = raw(`{"artifactSelectors":[{"producerSubtask":"train","outputArtifactKey":"nope"}]}`)
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, `pipeline output artifact "model"`)
}

// TestImportersMakeNoPod: an importer's artifact is the URI it names; the
// task taking it gets the URI and the metadata through the launcher.
func TestImportersMakeNoPod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testfixtures", "kfpexecutor", "importer.yaml"))
	require.NoError(t, err)
	spec, err := Parse(data)
	require.NoError(t, err)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	require.Len(t, p.Spec.Tasks, 1, "no pod for the importer")
	read := p.Spec.Tasks[0]
	assert.Empty(t, read.RunAfter)
	args := strings.Join(read.TaskSpec.Steps[1].Args, " ")
	assert.Contains(t, args, "--artifact data=$(params.uri) --artifact-metadata data={\"source\":\"e2e\"}")
	assert.NotContains(t, p.Annotations[contract.AnnotationOutputs], "importer")

	constant := func(uri string) error {
		spec, _ := Parse(data)
		spec.DeploymentSpec.Executors["exec-importer"].Importer = raw(`{"artifactUri":{"constant":"` + uri + `"},"metadata":{"source":"x"}}`)
		_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
		return err
	}
	for _, uri := range []string{"file:///kfp/artifacts/shared/data.csv", "gs://bucket/data.csv", "file:///etc/passwd", "file:///kfp/artifacts/../../etc/passwd"} {
		assert.NoError(t, constant(uri), "an importer records any URI; the consumer's launcher checks the store")
	}
	assert.ErrorContains(t, constant("$(params.x)"), "$(")
}

// TestImportersRecordAnyURI: an importer of a store this backend does not
// read compiles (the consumer's launcher refuses the store by name when it
// runs), and metadata placeholders of the importer's inputs reach the
// consumer's launcher as their values, after the tasks producing them.
func TestImportersRecordAnyURI(t *testing.T) {
	p := compileValid(t, load(t, "importer.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	require.Len(t, p.Spec.Tasks, 2, "make-name and read: no pod for the importers")
	read := p.Spec.Tasks[1]
	require.Equal(t, "read", read.Name)
	assert.Equal(t, []string{"make-name"}, read.RunAfter, "after the producer of a metadata value")
	args := strings.Join(read.TaskSpec.Steps[1].Args, " ")
	assert.Contains(t, args, "--artifact data=gs://bucket/data.csv --artifact named=$(params.uri) --artifact-metadata named=")
	assert.Contains(t, args, "--artifact-metadata-param named:metadata=$(tasks.make-name.results.Output) "+
		"--artifact-metadata-param named:metadata-2=$(params.image) --artifact-metadata-param named:metadata-3=$(params.count)")
	assert.Contains(t, args, "--pipeline-root file:///kfp/artifacts")

	spec := load(t, "importer.yaml")
	spec.DeploymentSpec.Executors["exec-importer-2"].Importer = raw(`{"artifactUri":{"runtimeParameter":"uri"},"metadata":{"a":"{{$.pipeline_job_name}}"}}`)
	_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "importer metadata placeholder")
	spec = load(t, "importer.yaml")
	spec.DeploymentSpec.Executors["exec-importer-2"].Importer = raw(`{"artifactUri":{"runtimeParameter":"uri"},"metadata":{"a":"{{$.inputs.parameters['nope']}}"}}`)
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, `importer metadata input "nope" is not bound`)
}

// TestAnExitPipelineOfIndependentTasks: an exit task that is a pipeline
// (the SDK's pipeline_as_exit_task shape) runs its tasks in Tekton's
// finally, the group's final status reaching them through the pipeline's
// TASK_FINAL_STATUS input; when its tasks depend on each other, they are
// the steps of one finally task (exitpipeline_test.go).
func TestAnExitPipelineOfIndependentTasks(t *testing.T) {
	exitPipeline := func() *PipelineSpec {
		spec := load(t, "exit_handler.yaml")
		spec.Components["comp-notify"] = &ComponentSpec{
			InputDefinitions: &IODefinitions{Parameters: map[string]*ParameterSpec{
				"status": {ParameterType: "TASK_FINAL_STATUS", IsOptional: true}, "msg": {ParameterType: "STRING"}}},
			DAG: &DAGSpec{Tasks: map[string]*TaskSpec{
				"report": {ComponentRef: ComponentRef{Name: "comp-cleanup"}, Inputs: &TaskInputs{Parameters: map[string]*InputParameter{
					"status": {ComponentInputParameter: "status"}, "user_input": {ComponentInputParameter: "msg"}}}},
				"echo": {ComponentRef: ComponentRef{Name: "comp-echo"}},
			}},
		}
		cleanup := spec.Root.DAG.Tasks["cleanup"]
		cleanup.ComponentRef.Name = "comp-notify"
		cleanup.Inputs.Parameters["msg"] = cleanup.Inputs.Parameters["user_input"]
		delete(cleanup.Inputs.Parameters, "user_input")
		return spec
	}
	p := compileValid(t, exitPipeline(), Options{Name: "x", LauncherImage: launcherImage})
	assert.ElementsMatch(t, []string{"after-work", "echo", "report"}, names(p.Spec.Finally))
	report := byName(p.Spec.Finally)["report"]
	assert.Empty(t, report.RunAfter)
	assert.Contains(t, fmt.Sprint(report.Params), "exit-handler-1", "the group's final status")

	spec := exitPipeline()
	spec.Components["comp-notify"].DAG.Tasks["echo"].DependentTasks = []string{"report"}
	p = compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	assert.Equal(t, []string{"after-work", "cleanup"}, names(p.Spec.Finally))
	steps, order := stepsByName(byName(p.Spec.Finally)["cleanup"].TaskSpec)
	assert.Equal(t, []string{installStep, "report", "echo", "check-report", "check-echo"}, order)
	assert.Equal(t, tektonv1.StepWhenExpressions{marker("report")}, steps["echo"].When)
}

// TestOneOfOutputs: each branch's producer publishes its value on the
// artifacts volume; a selector task after every branch, guarded by the
// group's conditions, gives the one published as its result, which the
// consumer and the pipeline's output take.
func TestOneOfOutputs(t *testing.T) {
	p := compileValid(t, load(t, "oneof.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := byName(p.Spec.Tasks)
	sel, ok := tasks["condition-branches-1-oneof-1"]
	require.True(t, ok, "the selector task, in %v", names(p.Spec.Tasks))
	assert.Equal(t, []string{"say", "say-2"}, sel.RunAfter, "after every branch, which runs it whether they ran or were skipped")
	require.Len(t, sel.When, 1, "guarded by the dsl.If around the group")
	assert.Equal(t, "$(params.enabled)", sel.When[0].Input)
	step := sel.TaskSpec.Steps[0]
	assert.Equal(t, []string{"oneof", "select", "$(results.value.path)",
		"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/say/oneof/Output",
		"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/say-2/oneof/Output"}, step.Args)
	for _, branch := range []string{"say", "say-2"} {
		steps := tasks[branch].TaskSpec.Steps
		last := steps[len(steps)-1]
		assert.Equal(t, PublishStep, last.Name)
		assert.Equal(t, []string{"oneof", "publish", "$(results.Output.path)",
			"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/" + branch + "/oneof/Output"}, last.Args)
	}
	assert.Equal(t, "$(tasks.condition-branches-1-oneof-1.results.value)", tasks["say-3"].Params[0].Value.StringVal)
	require.Len(t, p.Spec.Results, 1)
	assert.Equal(t, "$(tasks.condition-branches-1-oneof-1.results.value)", p.Spec.Results[0].Value.StringVal)
	for _, name := range []string{"flip", "say-3"} {
		for _, s := range tasks[name].TaskSpec.Steps {
			assert.NotEqual(t, PublishStep, s.Name, "%s is no branch", name)
		}
	}
}
