package kfpir

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const launcherImage = "registry.example/kfp-tekton-operator:v1"

func load(t *testing.T, file string) *PipelineSpec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	spec, err := Parse(data)
	require.NoError(t, err)
	return spec
}

// compileValid compiles and runs Tekton's validation once more, as its
// admission webhook would.
func compileValid(t *testing.T, spec *PipelineSpec, opts Options) *tektonv1.Pipeline {
	t.Helper()
	p, err := Compile(spec, opts)
	require.NoError(t, err)
	require.Nil(t, p.Validate(context.Background()), "Tekton validation")
	return p
}

func taskByName(t *testing.T, p *tektonv1.Pipeline, name string) tektonv1.PipelineTask {
	t.Helper()
	for _, pt := range p.Spec.Tasks {
		if pt.Name == name {
			return pt
		}
	}
	t.Fatalf("no task %q in %v", name, p.Spec.Tasks)
	return tektonv1.PipelineTask{}
}

func paramValue(pt tektonv1.PipelineTask, name string) string {
	for _, p := range pt.Params {
		if p.Name == name {
			return p.Value.StringVal
		}
	}
	return "<unset>"
}

func step(t *testing.T, pt tektonv1.PipelineTask, name string) tektonv1.Step {
	t.Helper()
	for _, s := range pt.TaskSpec.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("task %s has no step %s", pt.Name, name)
	return tektonv1.Step{}
}

func TestCompileDemoGolden(t *testing.T) {
	p := compileValid(t, load(t, "demo.yaml"), Options{
		Name: "demo-ml-v1", Namespace: "team-a", LauncherImage: launcherImage,
		Labels: map[string]string{"pipelines.kubeflow.org/pipeline": "demo-ml"},
	})
	out, err := yaml.Marshal(p)
	require.NoError(t, err)
	golden := filepath.Join("testdata", "demo.pipeline.golden.yaml")
	if *update {
		require.NoError(t, os.WriteFile(golden, out, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./internal/kfpir -update to create it")
	assert.Equal(t, string(want), string(out), "output changed; if intended, go test ./internal/kfpir -update")
}

func TestCompileDemo(t *testing.T) {
	p := compileValid(t, load(t, "demo.yaml"), Options{Name: "demo", LauncherImage: launcherImage})
	assert.Equal(t, "demo-ml", p.Spec.DisplayName)
	require.Len(t, p.Spec.Params, 2)
	assert.Equal(t, "0.1", p.Spec.Params[0].Default.StringVal)
	assert.Equal(t, "200", p.Spec.Params[1].Default.StringVal, "an integer default written 200.0")
	assert.Equal(t, "NUMBER_INTEGER", p.Spec.Params[1].Description)

	gen, train, eval := taskByName(t, p, "generate"), taskByName(t, p, "train"), taskByName(t, p, "evaluate")
	assert.Equal(t, "$(params.rows)", paramValue(gen, "rows"))
	assert.Equal(t, "$(tasks.generate.results.row_count)", paramValue(train, "rows"), "a result passed between tasks")
	assert.Equal(t, []string{"generate"}, train.RunAfter)
	assert.Equal(t, []string{"generate", "train"}, eval.RunAfter)
	assert.Equal(t, 2, eval.Retries)
	assert.Empty(t, gen.RunAfter)

	prep := step(t, gen, PrepareStep)
	assert.Equal(t, launcherImage, prep.Image)
	assert.Equal(t, []string{LauncherPath}, prep.Command)
	assert.Equal(t, []string{"mkdir", "$(workspaces.artifacts.path)/$(context.pipelineRun.name)/generate"}, prep.Args)
	assert.Equal(t, PrepareStep, gen.TaskSpec.Steps[0].Name, "prepare runs first")
	assert.Contains(t, step(t, gen, MainStep).Args, "$(workspaces.artifacts.path)/$(context.pipelineRun.name)/generate/dataset")
	assert.Contains(t, step(t, gen, MainStep).Args, "$(results.row_count.path)")
	assert.Contains(t, step(t, train, MainStep).Args, "$(workspaces.artifacts.path)/$(context.pipelineRun.name)/generate/dataset", "input artifact at the producer's path")
	assert.Contains(t, step(t, train, MainStep).Args, "file:///kfp/artifacts/$(context.pipelineRun.name)/train/model")
	assert.Contains(t, step(t, train, MainStep).Args, "--epochs=$(params.epochs)")
	assert.Len(t, eval.TaskSpec.Steps, 1, "no output artifacts, no prepare step")

	main := step(t, train, MainStep)
	assert.Equal(t, "registry.example/kfp-demo:v1", main.Image)
	assert.Equal(t, []string{"/ko-app/kfp-demo", "train"}, main.Command)
	assert.Equal(t, "256Mi", main.ComputeResources.Limits.Memory().String())
	assert.Equal(t, "100m", main.ComputeResources.Requests.Cpu().String())
	assert.Equal(t, "DEMO_LOG_LEVEL", main.Env[0].Name)

	for _, pt := range p.Spec.Tasks {
		assert.Equal(t, ArtifactsWorkspace, pt.Workspaces[0].Workspace)
		assert.Equal(t, "/kfp/artifacts", pt.TaskSpec.Workspaces[0].MountPath)
	}
	require.Len(t, p.Spec.Results, 1)
	assert.Equal(t, "$(tasks.evaluate.results.accuracy)", p.Spec.Results[0].Value.StringVal)
}

func TestCompileFeatures(t *testing.T) {
	p := compileValid(t, load(t, "features.yaml"), Options{Name: "features", LauncherImage: launcherImage})
	odd := taskNames.sanitise("Odd Names_Task")
	lr := paramNames.sanitise("learning.rate")
	lives := paramNames.sanitise("9lives")
	myResult := resultNames.sanitise("my.result")
	modelDir := resultNames.sanitise("Model Files")

	cases := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"root params of every type, as string params", func(t *testing.T) {
			defaults := map[string]string{}
			for _, ps := range p.Spec.Params {
				assert.Equal(t, tektonv1.ParamTypeString, ps.Type)
				if ps.Default != nil {
					defaults[ps.Name] = ps.Default.StringVal
				} else {
					defaults[ps.Name] = "<required>"
				}
			}
			assert.Equal(t, map[string]string{
				"config": `{"alpha":{"nested":true},"zeta":1}`, "flags": `["a","b"]`, "greeting": "<required>",
				lr: "0.001", "verbose": "false",
			}, defaults)
		}},
		{"description keeps the KFP type", func(t *testing.T) {
			for _, ps := range p.Spec.Params {
				if ps.Name == "greeting" {
					assert.Equal(t, "STRING: what to say", ps.Description)
				}
			}
		}},
		{"constants of every type", func(t *testing.T) {
			c := taskByName(t, p, "constants")
			for name, want := range map[string]string{
				"s": "hello world", "i": "3", "d": "2.5", "b": "true",
				"l": `[1,"two",false]`, "st": `{"a":["x"],"z":1}`, "cfg": "$(params.config)",
			} {
				assert.Equal(t, want, paramValue(c, name), name)
			}
			assert.Equal(t, []string{"s=$(params.s) i=$(params.i) d=$(params.d)", "b=$(params.b)", "$(params.l)", "$(params.st)", "$(params.cfg)"}, step(t, c, MainStep).Args)
		}},
		{"condition == becomes when in", func(t *testing.T) {
			w := taskByName(t, p, "when-heads").When
			require.Len(t, w, 1)
			assert.Equal(t, tektonv1.WhenExpression{Input: "$(tasks.flip.results.Output)", Operator: selection.In, Values: []string{"heads"}}, w[0])
		}},
		{"reversed != with double quotes becomes when notin on a bound input not in the component", func(t *testing.T) {
			pt := taskByName(t, p, "when-not-tails")
			require.Len(t, pt.When, 1)
			assert.Equal(t, tektonv1.WhenExpression{Input: "$(tasks.flip.results.Output)", Operator: selection.NotIn, Values: []string{"tails"}}, pt.When[0])
			assert.Equal(t, "$(params.greeting)", paramValue(pt, "msg"))
			assert.Equal(t, "<unset>", paramValue(pt, "pipelinechannel--flip-Output"), "only component inputs become params")
		}},
		{"context placeholders", func(t *testing.T) {
			assert.Equal(t, []string{"$(results.Output.path)", "$(context.pipelineRun.name)", "flip", "$(context.pipelineRun.uid)"}, step(t, taskByName(t, p, "flip"), MainStep).Args)
		}},
		{"names are sanitised", func(t *testing.T) {
			pt := taskByName(t, p, odd)
			assert.Equal(t, "Odd Names_Task", pt.DisplayName)
			assert.Equal(t, 4, pt.Retries)
			assert.Equal(t, "$(params."+lr+")", paramValue(pt, lr))
			assert.Equal(t, "$(params.flags)", paramValue(pt, lives))
			assert.Equal(t, []string{"$(params." + lr + ")", "$(params." + lives + ")", "$(results." + myResult + ".path)",
				"$(workspaces.artifacts.path)/$(context.pipelineRun.name)/" + odd + "/" + modelDir}, step(t, pt, MainStep).Args)
			assert.Equal(t, myResult, pt.TaskSpec.Results[0].Name)
		}},
		{"input artifact uri and a result from a sanitised producer", func(t *testing.T) {
			pt := taskByName(t, p, "uri-consumer")
			assert.Equal(t, []string{"file:///mnt/pipeline-root/$(context.pipelineRun.name)/" + odd + "/" + modelDir, "$(params.upstream)"}, step(t, pt, MainStep).Args)
			assert.Equal(t, "$(tasks."+odd+".results."+myResult+")", paramValue(pt, "upstream"))
			assert.Equal(t, []string{odd}, pt.RunAfter)
		}},
		{"the IR's file:// defaultPipelineRoot is the mount path", func(t *testing.T) {
			assert.Equal(t, "/mnt/pipeline-root", p.Spec.Tasks[0].TaskSpec.Workspaces[0].MountPath)
		}},
		{"pipeline output with a sanitised name", func(t *testing.T) {
			require.Len(t, p.Spec.Results, 1)
			assert.Equal(t, resultNames.sanitise("coin.side"), p.Spec.Results[0].Name)
			assert.Equal(t, "$(tasks.flip.results.Output)", p.Spec.Results[0].Value.StringVal)
		}},
		{"display name", func(t *testing.T) { assert.Equal(t, "Every supported feature", p.Spec.DisplayName) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.check)
	}
}

func TestCompileOptions(t *testing.T) {
	spec := load(t, "demo.yaml")
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage, PipelineRoot: "file:///data/roots/"})
	assert.Equal(t, "/data/roots", p.Spec.Tasks[0].TaskSpec.Workspaces[0].MountPath)
	assert.Contains(t, step(t, taskByName(t, p, "train"), MainStep).Args, "file:///data/roots/$(context.pipelineRun.name)/train/model")

	_, err := Compile(spec, Options{Name: "x"})
	assert.ErrorContains(t, err, "LauncherImage", "output artifacts need the launcherImage")
	_, err = Compile(spec, Options{LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "Name is required")
}

func TestCompileSizeLimit(t *testing.T) {
	spec := load(t, "demo.yaml")
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	b, err := json.Marshal(p)
	require.NoError(t, err)
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage, MaxBytes: len(b) - 1})
	assert.ErrorContains(t, err, "above the limit")
	_, err = Compile(spec, Options{Name: "x", LauncherImage: launcherImage, MaxBytes: len(b)})
	assert.NoError(t, err)

	big := load(t, "demo.yaml")
	big.DeploymentSpec.Executors["exec-train"].Container.Args = append(big.DeploymentSpec.Executors["exec-train"].Container.Args, strings.Repeat("x", DefaultMaxBytes))
	_, err = Compile(big, Options{Name: "x", LauncherImage: launcherImage})
	assert.ErrorContains(t, err, "etcd")
}

func TestCompileTaskNameCollision(t *testing.T) {
	spec := load(t, "demo.yaml")
	dag := spec.Root.DAG
	for _, name := range []string{"Generate", "generate.", "GENERATE"} {
		copied := *dag.Tasks["generate"]
		dag.Tasks[name] = &copied
	}
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	seen := map[string]bool{}
	for _, pt := range p.Spec.Tasks {
		assert.False(t, seen[pt.Name], "duplicate %s", pt.Name)
		seen[pt.Name] = true
	}
	assert.Len(t, seen, 6)
	assert.True(t, seen["generate"], "a valid name is kept")
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *PipelineSpec)
		want   string
	}{
		{"unknown component", func(s *PipelineSpec) { s.Root.DAG.Tasks["train"].ComponentRef.Name = "comp-nope" }, `task "train": component "comp-nope" is not defined`},
		{"unknown dependent task", func(s *PipelineSpec) { s.Root.DAG.Tasks["train"].DependentTasks = []string{"nope"} }, `dependent task "nope"`},
		{"unknown producer", func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].Inputs.Parameters["rows"].TaskOutputParameter.ProducerTask = "nope"
		}, `producer task "nope"`},
		{"unknown output key", func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].Inputs.Parameters["rows"].TaskOutputParameter.OutputParameterKey = "nope"
		}, `no output parameter "nope"`},
		{"unknown pipeline input", func(s *PipelineSpec) {
			s.Root.DAG.Tasks["generate"].Inputs.Parameters["rows"].ComponentInputParameter = "nope"
		}, `pipeline input "nope"`},
		{"input without value or default", func(s *PipelineSpec) { delete(s.Root.DAG.Tasks["generate"].Inputs.Parameters, "rows") }, `"rows" has no value and no default`},
		{"placeholder of an undeclared input", func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-generate"].Container.Args[1] = "{{$.inputs.parameters['nope']}}"
		}, `input parameter "nope" is not declared`},
		{"cycle", func(s *PipelineSpec) { s.Root.DAG.Tasks["generate"].DependentTasks = []string{"evaluate"} }, "cycle"},
		{"integer default with a fraction", func(s *PipelineSpec) {
			s.Root.InputDefinitions.Parameters["rows"].DefaultValue = json.RawMessage(`2.5`)
		}, "not an integer"},
		{"unknown parameter type", func(s *PipelineSpec) { s.Root.InputDefinitions.Parameters["rows"].ParameterType = "BYTES" }, `unknown parameterType "BYTES"`},
		{"schema version", func(s *PipelineSpec) { s.SchemaVersion = "1.0.0" }, "schemaVersion"},
		{"no image", func(s *PipelineSpec) { s.DeploymentSpec.Executors["exec-train"].Container.Image = "" }, "no image"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := load(t, "demo.yaml")
			tc.mutate(spec)
			_, err := Compile(spec, Options{Name: "x", LauncherImage: launcherImage})
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestCompileRefusesUnsupportedFeatures(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(s *PipelineSpec)
		opts    func(o *Options)
		feature string // substring of UnsupportedError.Feature
		task    string // UnsupportedError.Task
	}{
		{name: "parameter loop", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].ParameterIter = raw(`{"items":{"raw":"[1,2]"},"itemInput":"x"}`)
		}, feature: "loop", task: "train"},
		{name: "iterator policy", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].IteratorPolicy = raw(`{"parallelismLimit":2}`)
		}, feature: "loop", task: "train"},
		{name: "artifact loop on a container task", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["evaluate"].ArtifactIter = raw(`{"items":{"inputArtifact":"x"},"itemInput":"y"}`)
		}, feature: "loop (dsl.ParallelFor) over a container task", task: "evaluate"},
		{name: "exit task", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["evaluate"].TriggerPolicy = &TriggerPolicy{Strategy: "ALL_UPSTREAM_TASKS_COMPLETED"}
		}, feature: "pipeline output from an exit task", task: ""},
		{name: "task final status", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["generate"].Inputs.Parameters["rows"] = &InputParameter{TaskFinalStatus: raw(`{"producerTask":"train"}`)}
		}, feature: "task final status", task: "generate"},
		{name: "task final status type", mutate: func(s *PipelineSpec) {
			s.Components["comp-generate"].InputDefinitions.Parameters["rows"].ParameterType = "TASK_FINAL_STATUS"
		}, feature: "task final status", task: "generate"},
		{name: "resolver", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-generate"] = &ExecutorSpec{Resolver: raw(`{"outputArtifactQueries":{}}`)}
		}, feature: "resolver", task: "generate"},
		{name: "custom job", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-generate"] = &ExecutorSpec{CustomJob: raw(`{"customJob":{}}`)}
		}, feature: "custom job", task: "generate"},
		{name: "cache key", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].CachingOptions = &CachingOptions{EnableCache: true, CacheKey: "k"}
		}, feature: "cache key", task: "train"},
		{name: "retry backoff", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["evaluate"].RetryPolicy.BackoffDuration = "30s"
		}, feature: "retry backoff", task: "evaluate"},
		{name: "accelerator", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Resources.Accelerator = raw(`{"resourceType":"NVIDIA_TESLA_K80","resourceCount":"1"}`)
		}, feature: "accelerator type NVIDIA_TESLA_K80", task: "train"},
		{name: "accelerator count from a task output", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Resources.Accelerator = raw(`{"resourceType":"nvidia.com/gpu","resourceCount":"{{$.inputs.parameters['pipelinechannel--n']}}"}`)
			s.Root.DAG.Tasks["train"].Inputs.Parameters["pipelinechannel--n"] = &InputParameter{TaskOutputParameter: &TaskOutputParameter{ProducerTask: "generate", OutputParameterKey: "n"}}
		}, feature: "resource from a task output", task: "train"},
		{name: "resource from a task output", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Resources.ResourceCPULimit = "{{$.inputs.parameters['pipelinechannel--cpu']}}"
			s.Root.DAG.Tasks["train"].Inputs.Parameters["pipelinechannel--cpu"] = &InputParameter{TaskOutputParameter: &TaskOutputParameter{ProducerTask: "generate", OutputParameterKey: "n"}}
		}, feature: "resource from a task output", task: "train"},
		{name: "resource from a placeholder with text", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Resources.ResourceCPULimit = "{{$.inputs.parameters['pipelinechannel--cpu']}}m"
		}, feature: "resource from a placeholder that is not an input", task: "train"},
		{name: "lifecycle", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Lifecycle = raw(`{"preCacheCheck":{}}`)
		}, feature: "lifecycle", task: "train"},
		{name: "artifact list", mutate: func(s *PipelineSpec) {
			s.Components["comp-evaluate"].InputDefinitions.Artifacts["model"].IsArtifactList = true
		}, feature: "artifact list", task: "evaluate"},
		{name: "runtime artifact", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["evaluate"].Inputs.Artifacts["model"] = &InputArtifact{RuntimeArtifact: raw(`{"customProperties":{}}`)}
		}, feature: "runtime artifact", task: "evaluate"},
		{name: "OneOf output", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Outputs.Parameters["accuracy"] = &DAGOutputParameter{ValueFromOneof: raw(`{"parameterSelectors":[]}`)}
		}, feature: "dsl.OneOf", task: ""},
		{name: "parameter expression selector", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["generate"].Inputs.Parameters["rows"] = &InputParameter{ParameterExpression: "parseJson(string_value)['x']"}
		}, feature: "parameter expression", task: "generate"},
		{name: "task platform config", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["generate"].PlatformConfig = raw(`{"kubernetes":{}}`)
		}, feature: "platform configuration", task: "generate"},
		{name: "component platform specs", mutate: func(s *PipelineSpec) {
			s.Components["comp-train"].SinglePlatformSpecs = raw(`[{"platform":"kubernetes"}]`)
		}, feature: "component platform configuration", task: "train"},
		{name: "condition that is not CEL", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].TriggerPolicy = &TriggerPolicy{Condition: "int(inputs.parameter_values['rows']) >"}
		}, feature: "condition", task: "train"},
		{name: "condition that is not a boolean", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].TriggerPolicy = &TriggerPolicy{Condition: "int(inputs.parameter_values['rows']) + 1"}
		}, feature: "condition", task: "train"},
		{name: "condition on an unbound input", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["train"].TriggerPolicy = &TriggerPolicy{Condition: "inputs.parameter_values['nope'] == 'x'"}
		}, feature: "unbound input", task: "train"},
		{name: "unknown placeholder", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Args = []string{"{{$.pipeline_job_create_time_utc}}"}
		}, feature: "placeholder", task: "train"},
		{name: "json_escape placeholder", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Args = []string{"{{$.inputs.parameters['rows'].json_escape[0]}}"}
		}, feature: "placeholder", task: "train"},
		{name: "placeholder in env", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Env[0].Value = "{{$.inputs.parameters['rows']}}"
		}, feature: "environment variable", task: "train"},
		{name: "literal Tekton variable in args", mutate: func(s *PipelineSpec) {
			s.DeploymentSpec.Executors["exec-train"].Container.Args = []string{"echo $(params.secret)"}
		}, feature: "literal Tekton variable", task: "train"},
		{name: "literal Tekton variable in a constant", mutate: func(s *PipelineSpec) {
			s.Root.DAG.Tasks["generate"].Inputs.Parameters["rows"] = &InputParameter{RuntimeValue: &RuntimeValue{Constant: raw(`"$(context.taskRun.name)"`)}}
		}, feature: "literal Tekton variable", task: "generate"},
		{name: "object store pipeline root", opts: func(o *Options) { o.PipelineRoot = "gs://bucket/root" }, feature: "pipeline root gs://bucket/root", task: ""},
		{name: "relative file root", opts: func(o *Options) { o.PipelineRoot = "file://relative/x" }, feature: "pipeline root", task: ""},
		{name: "PipelineJob runtimeConfig", mutate: func(s *PipelineSpec) {
			s.RuntimeConfig = raw(`{"parameterValues":{"rows":3}}`)
		}, feature: "runtimeConfig", task: ""},
		{name: "platform spec", mutate: func(s *PipelineSpec) {
			s.PlatformSpec = raw(`{"platforms":{"kubernetes":{"deploymentSpec":{"executors":{"exec-train":{"initContainers":[{"name":"x","image":"busybox"}]}}}}}}`)
		}, feature: "kfp-kubernetes setting initContainers", task: "train"},
		{name: "platform spec image pull secret from a parameter", mutate: func(s *PipelineSpec) {
			s.PlatformSpec = raw(`{"platforms":{"kubernetes":{"deploymentSpec":{"executors":{"exec-train":{"imagePullSecret":[{"secretNameParameter":{"componentInputParameter":"rows"}}]}}}}}}`)
		}, feature: "kfp-kubernetes image pull secret from a parameter", task: "train"},
		{name: "another platform", mutate: func(s *PipelineSpec) {
			s.PlatformSpec = raw(`{"platforms":{"vertex":{"deploymentSpec":{"executors":{"exec-train":{"machine":"n1"}}}}}}`)
		}, feature: "platform spec vertex", task: ""},
		{name: "another namespace's Secret", mutate: func(s *PipelineSpec) {
			s.PlatformSpec = raw(`{"platforms":{"kubernetes":{"deploymentSpec":{"executors":{"exec-train":{"secretAsEnv":[{"secretName":"db","keyToEnv":[{"secretKey":"password","envVar":"PW"}]}]}}}}}}`)
		}, opts: func(o *Options) { o.Namespace, o.TenantNamespace = "team-a", "team-b" }, feature: "kfp-kubernetes Secret of another namespace", task: "train"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := load(t, "demo.yaml")
			if tc.mutate != nil {
				tc.mutate(spec)
			}
			opts := Options{Name: "x", LauncherImage: launcherImage}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			p, err := Compile(spec, opts)
			assert.Nil(t, p)
			var ue *UnsupportedError
			require.True(t, errors.As(err, &ue), "want an UnsupportedError, got %v", err)
			assert.Contains(t, ue.Feature, tc.feature)
			assert.Equal(t, tc.task, ue.Task)
			assert.Contains(t, err.Error(), tc.feature, "the message names the feature")
			if tc.task != "" {
				assert.Contains(t, err.Error(), `task "`+tc.task+`"`, "the message names the task")
			}
		})
	}
}

// TestPythonFunctionComponentsRunUnderTheLauncher compiles components as
// the KFP SDK writes them ({{$}}, Concat, IfPresent): each runs its
// container through the launcher, which the prepare step installs, with
// its unresolved command and interface in --spec, and only the inputs
// that have a value as --param.
func TestPythonFunctionComponentsRunUnderTheLauncher(t *testing.T) {
	p := compileValid(t, load(t, "python_function.yaml"), Options{Name: "x", LauncherImage: launcherImage})
	tasks := map[string]tektonv1.PipelineTask{}
	for _, pt := range p.Spec.Tasks {
		tasks[pt.Name] = pt
	}
	require.Len(t, tasks, 4)
	for name, image := range map[string]string{"add": "python:3.12", "report": "python:3.12", "save": "python:3.12", "echo": "alpine:3.20"} {
		ts := tasks[name].TaskSpec.TaskSpec
		require.Len(t, ts.Steps, 2, name)
		prepare, main := ts.Steps[0], ts.Steps[1]
		assert.Equal(t, launcherImage, prepare.Image)
		assert.Equal(t, []string{LauncherPath, "install", "/kfp-launcher/kfp-task"}, append(prepare.Command, prepare.Args...), name)
		assert.Equal(t, image, main.Image, name)
		assert.Equal(t, []string{"/kfp-launcher/kfp-task"}, main.Command, name)
		assert.Equal(t, "launch", main.Args[0])
		require.Len(t, ts.Volumes, 1)
		assert.NotNil(t, ts.Volumes[0].EmptyDir)
		for _, s := range ts.Steps {
			assert.Equal(t, LauncherDir, s.VolumeMounts[0].MountPath)
		}
	}

	args := func(name string) map[string][]string {
		out := map[string][]string{}
		a := tasks[name].TaskSpec.TaskSpec.Steps[1].Args[1:]
		for i := 0; i+1 < len(a); i += 2 {
			out[a[i]] = append(out[a[i]], a[i+1])
		}
		return out
	}
	add := args("add")
	var spec struct {
		Task    string
		Command []string
		Args    []string
		Inputs  struct {
			Parameters map[string]struct{ Type string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(add["--spec"][0]), &spec))
	assert.Equal(t, "add", spec.Task)
	assert.Equal(t, []string{"--executor_input", "{{$}}", "--function_to_execute", "add"}, spec.Args, "the arguments reach the launcher unresolved")
	assert.Len(t, spec.Command, 7, "sh -c SCRIPT sh -ec SCRIPT SOURCE, as the SDK writes it")
	assert.Equal(t, "NUMBER_DOUBLE", spec.Inputs.Parameters["b"].Type)
	assert.Equal(t, []string{"a=$(params.a)"}, add["--param"], "b is left to its default, which the launcher applies")
	assert.Equal(t, []string{"Output=$(results.Output.path)"}, add["--result"])
	assert.Equal(t, []string{"file:///kfp/artifacts/$(context.pipelineRun.name)/add"}, add["--output-uri"])

	report := args("report")
	assert.Equal(t, []string{"total=$(params.total)"}, report["--param"], "the unset optional note has no param")
	assert.Equal(t, []string{"Output=$(results.Output.path)"}, report["--result"])
	assert.Equal(t, []string{"file:///kfp/artifacts/$(context.pipelineRun.name)/save"}, args("save")["--output-uri"], "save's Dataset lives under its task")
	var totalBinding string
	for _, prm := range tasks["report"].Params {
		if prm.Name == "total" {
			totalBinding = prm.Value.StringVal
		}
	}
	assert.Equal(t, "$(tasks.add.results.Output)", totalBinding)
	assert.Equal(t, []string{"word=$(params.word)"}, args("echo")["--param"])
	for _, ps := range tasks["report"].TaskSpec.TaskSpec.Params {
		assert.NotEqual(t, "note", ps.Name)
	}
}
