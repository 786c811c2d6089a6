package kfpir

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestParseRefusesProtoFields: fields that KFP's protobuf types know but the
// compiler has no place for are refused by name when set, and fields newer
// SDKs write that the pinned pipelinespec lacks are refused as the features
// they are.
func TestParseRefusesProtoFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "demo.yaml"))
	require.NoError(t, err)
	demo := string(data)
	cases := []struct {
		name, old, new, feature, task string
	}{
		{"deprecated input parameter type", "        rows:\n          parameterType: NUMBER_INTEGER\n", "        rows:\n          parameterType: NUMBER_INTEGER\n          type: INT\n",
			"IR field inputDefinitions.parameters.type", ""},
		{"artifact schemaUri", "schemaTitle: system.Dataset", "schemaUri: gs://schemas/dataset.yaml", "IR field artifactType.schemaUri", ""},
		{"output artifact metadata", "    outputDefinitions:\n      artifacts:\n        dataset:\n", "    outputDefinitions:\n      artifacts:\n        dataset:\n          metadata: {a: 1}\n",
			"IR field outputDefinitions.artifacts.metadata", ""},
		{"constantValue", "componentInputParameter: rows", "runtimeValue: {constantValue: {intValue: 3}}", "IR field runtimeValue.constantValue", "generate"},
		{"runtimeParameter", "componentInputParameter: rows", "runtimeValue: {runtimeParameter: rows}", "IR field runtimeValue.runtimeParameter", "generate"},
		{"cache key", "      train:\n        cachingOptions:\n          enableCache: true\n", "      train:\n        cachingOptions: {enableCache: true, cacheKey: k}\n",
			"caching with a cache key", "train"},
		{"task platform config", "        taskInfo:\n          name: train\n", "        taskInfo:\n          name: train\n        platformConfig: {kubernetes: {}}\n",
			"task platform configuration", "train"},
		{"component taskConfigPassthroughs", "    executorLabel: exec-train\n", "    executorLabel: exec-train\n    taskConfigPassthroughs: [{field: RESOURCES}]\n",
			"component platform configuration", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, demo, tc.old)
			_, err := Parse([]byte(strings.Replace(demo, tc.old, tc.new, 1)))
			var ue *UnsupportedError
			require.True(t, errors.As(err, &ue), "want an UnsupportedError, got %v", err)
			assert.Equal(t, tc.feature, ue.Feature)
			assert.Equal(t, tc.task, ue.Task)
		})
	}
}

func TestParseNamesWhereDecodingFails(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "loop_static.yaml"))
	require.NoError(t, err)
	loop := string(data)
	cases := []struct{ name, old, new, want string }{
		{"task of a nested DAG", "          taskInfo: {name: echo}\n", "          taskInfo: {name: echo}\n          surprise: 1\n", `task "echo": json: unknown field "surprise"`},
		{"component", "    executorLabel: exec-echo\n", "    executorLabel: exec-echo\n    surprise: 1\n", `component "comp-echo": json: unknown field "surprise"`},
		{"executor", "        image: alpine:3\n", "        image: alpine:3\n        surprise: 1\n", `deploymentSpec: executor "exec-echo": json: unknown field "surprise"`},
		{"enum", "msg: {parameterType: STRING}", "msg: {parameterType: TEXT}", `invalid value for enum`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, loop, tc.old)
			_, err := Parse([]byte(strings.Replace(loop, tc.old, tc.new, 1)))
			assert.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "proto:", "protobuf's unstable error head is removed")
		})
	}
}

// handledFields are the fields of the pinned pipelinespec types reachable
// from what Parse decodes, each converted, kept as raw JSON for Compile to
// refuse, or refused by Parse. A new version of the module that adds a field
// fails this test until the field is handled in parse.go and listed here.
var handledFields = []string{
	"ArtifactIteratorSpec.ItemsSpec.inputArtifact", "ArtifactIteratorSpec.itemInput", "ArtifactIteratorSpec.items",
	"ArtifactTypeSchema.instanceSchema", "ArtifactTypeSchema.schemaTitle", "ArtifactTypeSchema.schemaUri", "ArtifactTypeSchema.schemaVersion",
	"ComponentInputsSpec.ArtifactSpec.artifactType", "ComponentInputsSpec.ArtifactSpec.description",
	"ComponentInputsSpec.ArtifactSpec.isArtifactList", "ComponentInputsSpec.ArtifactSpec.isOptional",
	"ComponentInputsSpec.ParameterSpec.defaultValue", "ComponentInputsSpec.ParameterSpec.description",
	"ComponentInputsSpec.ParameterSpec.isOptional", "ComponentInputsSpec.ParameterSpec.parameterType", "ComponentInputsSpec.ParameterSpec.type",
	"ComponentInputsSpec.artifacts", "ComponentInputsSpec.parameters",
	"ComponentOutputsSpec.ArtifactSpec.artifactType", "ComponentOutputsSpec.ArtifactSpec.customProperties",
	"ComponentOutputsSpec.ArtifactSpec.description", "ComponentOutputsSpec.ArtifactSpec.isArtifactList",
	"ComponentOutputsSpec.ArtifactSpec.metadata", "ComponentOutputsSpec.ArtifactSpec.properties",
	"ComponentOutputsSpec.ParameterSpec.description", "ComponentOutputsSpec.ParameterSpec.parameterType", "ComponentOutputsSpec.ParameterSpec.type",
	"ComponentOutputsSpec.artifacts", "ComponentOutputsSpec.parameters",
	"ComponentRef.name",
	"ComponentSpec.dag", "ComponentSpec.executorLabel", "ComponentSpec.inputDefinitions", "ComponentSpec.outputDefinitions", "ComponentSpec.singlePlatformSpecs",
	"DagOutputsSpec.ArtifactSelectorSpec.outputArtifactKey", "DagOutputsSpec.ArtifactSelectorSpec.producerSubtask",
	"DagOutputsSpec.DagOutputArtifactSpec.artifactSelectors",
	"DagOutputsSpec.DagOutputParameterSpec.valueFromOneof", "DagOutputsSpec.DagOutputParameterSpec.valueFromParameter",
	"DagOutputsSpec.ParameterSelectorSpec.outputParameterKey", "DagOutputsSpec.ParameterSelectorSpec.producerSubtask",
	"DagOutputsSpec.ParameterSelectorsSpec.parameterSelectors", "DagOutputsSpec.artifacts", "DagOutputsSpec.parameters",
	"DagSpec.outputs", "DagSpec.tasks",
	"ParameterIteratorSpec.ItemsSpec.inputParameter", "ParameterIteratorSpec.ItemsSpec.raw", "ParameterIteratorSpec.itemInput", "ParameterIteratorSpec.items",
	"PipelineDeploymentConfig.AIPlatformCustomJobSpec.customJob",
	"PipelineDeploymentConfig.ExecutorSpec.container", "PipelineDeploymentConfig.ExecutorSpec.customJob",
	"PipelineDeploymentConfig.ExecutorSpec.importer", "PipelineDeploymentConfig.ExecutorSpec.resolver",
	"PipelineDeploymentConfig.ImporterSpec.artifactUri", "PipelineDeploymentConfig.ImporterSpec.customProperties",
	"PipelineDeploymentConfig.ImporterSpec.metadata", "PipelineDeploymentConfig.ImporterSpec.properties",
	"PipelineDeploymentConfig.ImporterSpec.reimport", "PipelineDeploymentConfig.ImporterSpec.typeSchema",
	"PipelineDeploymentConfig.PipelineContainerSpec.EnvVar.name", "PipelineDeploymentConfig.PipelineContainerSpec.EnvVar.value",
	"PipelineDeploymentConfig.PipelineContainerSpec.Lifecycle.Exec.args", "PipelineDeploymentConfig.PipelineContainerSpec.Lifecycle.Exec.command",
	"PipelineDeploymentConfig.PipelineContainerSpec.Lifecycle.preCacheCheck",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.AcceleratorConfig.count",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.AcceleratorConfig.resourceCount",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.AcceleratorConfig.resourceType",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.AcceleratorConfig.type",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.accelerator",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.cpuLimit", "PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.cpuRequest",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.memoryLimit", "PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.memoryRequest",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.resourceCpuLimit", "PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.resourceCpuRequest",
	"PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.resourceMemoryLimit", "PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec.resourceMemoryRequest",
	"PipelineDeploymentConfig.PipelineContainerSpec.args", "PipelineDeploymentConfig.PipelineContainerSpec.command",
	"PipelineDeploymentConfig.PipelineContainerSpec.env", "PipelineDeploymentConfig.PipelineContainerSpec.image",
	"PipelineDeploymentConfig.PipelineContainerSpec.lifecycle", "PipelineDeploymentConfig.PipelineContainerSpec.resources",
	"PipelineDeploymentConfig.ResolverSpec.ArtifactQuerySpec.filter", "PipelineDeploymentConfig.ResolverSpec.ArtifactQuerySpec.limit",
	"PipelineDeploymentConfig.ResolverSpec.outputArtifactQueries", "PipelineDeploymentConfig.executors",
	"PipelineInfo.description", "PipelineInfo.displayName", "PipelineInfo.name",
	"PipelineJob.RuntimeConfig.gcsOutputDirectory", "PipelineJob.RuntimeConfig.parameterValues", "PipelineJob.RuntimeConfig.parameters",
	"PipelineJob.displayName", "PipelineJob.labels", "PipelineJob.name", "PipelineJob.pipelineSpec", "PipelineJob.runtimeConfig",
	"PipelineSpec.components", "PipelineSpec.defaultPipelineRoot", "PipelineSpec.deploymentSpec", "PipelineSpec.pipelineInfo",
	"PipelineSpec.root", "PipelineSpec.schemaVersion", "PipelineSpec.sdkVersion",
	"PipelineTaskInfo.name",
	"PipelineTaskSpec.CachingOptions.enableCache", "PipelineTaskSpec.IteratorPolicy.parallelismLimit",
	"PipelineTaskSpec.RetryPolicy.backoffDuration", "PipelineTaskSpec.RetryPolicy.backoffFactor",
	"PipelineTaskSpec.RetryPolicy.backoffMaxDuration", "PipelineTaskSpec.RetryPolicy.maxRetryCount",
	"PipelineTaskSpec.TriggerPolicy.condition", "PipelineTaskSpec.TriggerPolicy.strategy",
	"PipelineTaskSpec.artifactIterator", "PipelineTaskSpec.cachingOptions", "PipelineTaskSpec.componentRef",
	"PipelineTaskSpec.dependentTasks", "PipelineTaskSpec.inputs", "PipelineTaskSpec.iteratorPolicy",
	"PipelineTaskSpec.parameterIterator", "PipelineTaskSpec.retryPolicy", "PipelineTaskSpec.taskInfo", "PipelineTaskSpec.triggerPolicy",
	"PlatformDeploymentConfig.executors", "PlatformSpec.platforms",
	"SinglePlatformSpec.config", "SinglePlatformSpec.deploymentSpec", "SinglePlatformSpec.pipelineConfig", "SinglePlatformSpec.platform",
	"TaskInputsSpec.InputArtifactSpec.TaskOutputArtifactSpec.outputArtifactKey", "TaskInputsSpec.InputArtifactSpec.TaskOutputArtifactSpec.producerTask",
	"TaskInputsSpec.InputArtifactSpec.componentInputArtifact", "TaskInputsSpec.InputArtifactSpec.taskOutputArtifact",
	"TaskInputsSpec.InputParameterSpec.TaskFinalStatus.producerTask",
	"TaskInputsSpec.InputParameterSpec.TaskOutputParameterSpec.outputParameterKey", "TaskInputsSpec.InputParameterSpec.TaskOutputParameterSpec.producerTask",
	"TaskInputsSpec.InputParameterSpec.componentInputParameter", "TaskInputsSpec.InputParameterSpec.parameterExpressionSelector",
	"TaskInputsSpec.InputParameterSpec.runtimeValue", "TaskInputsSpec.InputParameterSpec.taskFinalStatus", "TaskInputsSpec.InputParameterSpec.taskOutputParameter",
	"TaskInputsSpec.artifacts", "TaskInputsSpec.parameters",
	"Value.doubleValue", "Value.intValue", "Value.stringValue",
	"ValueOrRuntimeParameter.constant", "ValueOrRuntimeParameter.constantValue", "ValueOrRuntimeParameter.runtimeParameter",
}

func TestEveryProtoFieldIsHandled(t *testing.T) {
	var found []string
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] || md.ParentFile().Package() != "ml_pipelines" {
			return
		}
		seen[md.FullName()] = true
		for i := 0; i < md.Fields().Len(); i++ {
			f := md.Fields().Get(i)
			found = append(found, strings.TrimPrefix(string(md.FullName()), "ml_pipelines.")+"."+f.JSONName())
			if f.IsMap() {
				f = f.MapValue()
			}
			if f.Message() != nil {
				walk(f.Message())
			}
		}
	}
	for _, m := range []proto.Message{&pipelinespec.PipelineSpec{}, &pipelinespec.PipelineDeploymentConfig{}, &pipelinespec.PipelineJob{}, &pipelinespec.PlatformSpec{}} {
		walk(m.ProtoReflect().Descriptor())
	}
	sort.Strings(found)
	want := append([]string(nil), handledFields...)
	sort.Strings(want)
	assert.Equal(t, want, found, "pipelinespec fields changed: handle the new ones in parse.go, then list them here")
}
