package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

func TestEmbeddedTasksAreTheDefinitions(t *testing.T) {
	all, err := All()
	require.NoError(t, err)
	defs := taskdef.Tasks()
	require.Len(t, all, len(defs), "tasks/*.yaml is stale: run make manifests")
	byName := map[string]bool{}
	for _, def := range defs {
		byName[def.Name] = true
		data, err := os.ReadFile(def.Name + ".yaml")
		require.NoError(t, err, "run make manifests")
		var fromYAML, fromGo any
		require.NoError(t, yaml.Unmarshal(data, &fromYAML))
		goYAML, err := yaml.Marshal(def)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(goYAML, &fromGo))
		pruneForComparison(fromGo)
		assert.Equal(t, fromGo, fromYAML, "%s.yaml differs from tasks/taskdef: run make manifests", def.Name)
	}
	for _, task := range all {
		assert.True(t, byName[task.Name], "%s.yaml has no definition in tasks/taskdef", task.Name)
	}
}

func pruneForComparison(v any) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["computeResources"].(map[string]any); ok && len(r) == 0 {
			delete(x, "computeResources")
		}
		if m, ok := x["metadata"].(map[string]any); ok {
			delete(m, "creationTimestamp")
		}
		for _, c := range x {
			pruneForComparison(c)
		}
	case []any:
		for _, c := range x {
			pruneForComparison(c)
		}
	}
}

func TestTasksPassTektonValidation(t *testing.T) {
	all, err := All()
	require.NoError(t, err)
	for _, task := range all {
		task = task.DeepCopy()
		task.SetDefaults(context.Background())
		assert.Nil(t, task.Validate(context.Background()), task.Name)
	}
}

func TestTasksFollowTheContract(t *testing.T) {
	all, err := All()
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, task := range all {
		assert.Contains(t, string(readme), "`"+task.Name+"`", "tasks/README.md documents every Task")
		assert.Equal(t, contract.ManagedByOperator, task.Labels[contract.LabelManagedBy])

		sc := task.Spec.StepTemplate.SecurityContext
		require.NotNil(t, sc, task.Name)
		assert.True(t, *sc.RunAsNonRoot && !*sc.AllowPrivilegeEscalation, "%s: Pod Security restricted", task.Name)
		assert.Equal(t, []string{"ALL"}, []string{string(sc.Capabilities.Drop[0])})

		results := map[string]bool{}
		for _, r := range task.Spec.Results {
			results[r.Name] = true
		}
		if task.Name == taskdef.CompileTaskName {
			// Its one result is a 71-byte digest, written by its last step.
			assert.Equal(t, map[string]bool{taskdef.ResultDefinitionDigest: true}, results)
		} else {
			assert.True(t, results[taskdef.ResultProviderID] && results[taskdef.ResultProviderError], task.Name)
			// The step writing the results knows how much of its termination
			// message the kubelet keeps: 12 KiB per pod among the steps and
			// Tekton's prepare init container, at most 4 KiB each.
			report := task.Spec.Steps[len(task.Spec.Steps)-1]
			args := strings.Join(report.Args, " ")
			want := min(4096, 12*1024/(len(task.Spec.Steps)+1))
			assert.Contains(t, args, fmt.Sprintf("--results-budget %d", want), "%s: %s", task.Name, args)
		}

		// Every param is used, and only through env or args: never in a script.
		for _, p := range task.Spec.Params {
			used := false
			for _, s := range task.Spec.Steps {
				assert.Empty(t, s.Script, "%s/%s: no scripts; params reach steps through env and args", task.Name, s.Name)
				ref := "$(params." + p.Name + ")"
				used = used || s.Image == ref || strings.Contains(strings.Join(s.Args, " "), ref)
				for _, e := range s.Env {
					used = used || e.Value == ref
				}
			}
			assert.True(t, used, "%s declares param %s but no step uses it", task.Name, p.Name)
		}
	}
}

func TestNamesAreSortedAndPrefixed(t *testing.T) {
	names, err := Names()
	require.NoError(t, err)
	require.Len(t, names, len(taskdef.Operations)+1, "one Task per operation, and the compile Task")
	for i, n := range names {
		assert.True(t, strings.HasPrefix(n, "kfp-"), n)
		if i > 0 {
			assert.Less(t, names[i-1], n)
		}
		assert.FileExists(t, filepath.Join(".", n+".yaml"))
	}
}

// TestTenantCodeSeesNoProviderSecrets: the steps running images the
// Pipeline's author controls (the compiler, injected into the pipeline's
// image) run only in the compile Task, which receives nothing of the
// provider's (no resource, no provider config, no provider image) and hides
// the token path; the compile Task's last step seals the definition and
// reports its digest; the provider's Tasks take the definition only through
// the helper, checked against that digest.
func TestTenantCodeSeesNoProviderSecrets(t *testing.T) {
	all, err := All()
	require.NoError(t, err)
	tenantImages := map[string]bool{"$(params." + taskdef.ParamCompilerImage + ")": true, "$(params." + taskdef.ParamPipelineImage + ")": true}
	helper := "$(params." + taskdef.ParamHelperImage + ")"
	tenantSteps, compilingTasks := 0, 0
	for _, task := range all {
		assert.Empty(t, task.Spec.StepTemplate.VolumeMounts, "%s: every step names the volumes it mounts", task.Name)
		if task.Name == taskdef.CompileTaskName {
			for _, p := range task.Spec.Params {
				assert.NotContains(t, []string{taskdef.ParamResource, taskdef.ParamProviderConfig, taskdef.ParamProviderImage}, p.Name,
					"the compile Task receives nothing of the provider's")
			}
			for i, s := range task.Spec.Steps {
				mounts := map[string]string{}
				for _, m := range s.VolumeMounts {
					mounts[m.MountPath] = m.Name
				}
				assert.Equal(t, taskdef.VolumeCompile, mounts[taskdef.Dir], "%s/%s", task.Name, s.Name)
				if tenantImages[s.Image] {
					tenantSteps++
					assert.Equal(t, taskdef.VolumeNoToken, mounts[taskdef.ServiceAccountDir], "%s/%s: the token path is hidden", task.Name, s.Name)
					continue
				}
				assert.Equal(t, helper, s.Image, "%s/%s: every other step is the helper", task.Name, s.Name)
				if i == len(task.Spec.Steps)-1 {
					args := strings.Join(s.Args, " ")
					assert.Contains(t, args, "--replace", "the seal step replaces whatever tenant steps left")
					assert.Contains(t, args, "--digest-result $(results."+taskdef.ResultDefinitionDigest+".path)")
				}
			}
			continue
		}
		for _, s := range task.Spec.Steps {
			assert.False(t, tenantImages[s.Image], "%s/%s runs tenant code beside the provider", task.Name, s.Name)
			for _, m := range s.VolumeMounts {
				assert.Equal(t, taskdef.VolumeProvider, m.Name, "%s/%s", task.Name, s.Name)
			}
			if s.Name == "stage-definition" {
				compilingTasks++
				assert.Equal(t, helper, s.Image)
				assert.Contains(t, strings.Join(s.Args, " "), "--digest $(params."+taskdef.ParamDefinitionDigest+")", task.Name)
			}
		}
	}
	assert.Equal(t, 2, tenantSteps, "the compile Task's two tenant steps")
	assert.Equal(t, 2, compilingTasks, "pipeline create and update stage the sealed definition")

	// In the shapes, the provider's task takes the digest from the compile task's result.
	for _, op := range taskdef.Operations {
		shape := taskdef.Shape(op)
		if !op.Compiles {
			assert.Len(t, shape.Tasks, 1, op.TaskName())
			continue
		}
		require.Len(t, shape.Tasks, 2, op.TaskName())
		assert.Equal(t, taskdef.CompileTaskName, shape.Tasks[0].TaskRef.Name)
		digest := ""
		for _, p := range shape.Tasks[1].Params {
			if p.Name == taskdef.ParamDefinitionDigest {
				digest = p.Value.StringVal
			}
		}
		assert.Equal(t, "$(tasks."+taskdef.CompilePipelineTask+".results."+taskdef.ResultDefinitionDigest+")", digest)
	}
}
