package operator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/experiment"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/pipeline"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/run"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/runschedule"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// operationsRun are the operations the lifecycle controllers run, per kind:
// create and delete, and update unless the kind is create-only.
func operationsRun() map[string][]string {
	ops := func(createOnly bool) []string {
		if createOnly {
			return []string{string(contract.OperationCreate), string(contract.OperationDelete)}
		}
		return []string{string(contract.OperationCreate), string(contract.OperationUpdate), string(contract.OperationDelete)}
	}
	return map[string][]string{
		pipeline.Kind.Traits().Name:    ops(pipeline.Kind.Traits().CreateOnly),
		experiment.Kind.Traits().Name:  ops(experiment.Kind.Traits().CreateOnly),
		runschedule.Kind.Traits().Name: ops(runschedule.Kind.Traits().CreateOnly),
		run.Kind.Traits().Name:         ops(run.Kind.Traits().CreateOnly),
	}
}

// Nothing is applied that nothing uses: every shared Task the Provider
// controller applies is referenced by the shape of an operation the
// controllers run, and every such shape's Tasks are applied.
func TestEveryAppliedTaskIsUsedByAnOperation(t *testing.T) {
	referenced := map[string]bool{}
	for kind, ops := range operationsRun() {
		for _, op := range ops {
			operation, ok := taskdef.Find(contract.Kind(kind), contract.Operation(op))
			require.True(t, ok, "no shared Task for %s %s", kind, op)
			shape, err := pipelines.Get(operation.TaskName())
			require.NoError(t, err)
			for _, task := range shape.Tasks {
				require.NotNil(t, task.TaskRef, "%s: task %s", operation.TaskName(), task.Name)
				referenced[task.TaskRef.Name] = true
			}
		}
	}
	applied, err := tasks.Names()
	require.NoError(t, err)
	appliedSet := map[string]bool{}
	for _, name := range applied {
		appliedSet[name] = true
		assert.True(t, referenced[name], "shared Task %s is applied in every workflow namespace but no operation uses it", name)
	}
	for name := range referenced {
		assert.True(t, appliedSet[name], "an operation uses Task %s, which the Provider controller does not apply", name)
	}
	assert.Len(t, applied, len(taskdef.Operations)+1, "one shared Task per operation, and the compile Task")
}
