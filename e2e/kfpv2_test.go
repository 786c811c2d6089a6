//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPythonFunctionComponentsRunOnTekton runs, through the Tekton
// provider, a pipeline compiled as the KFP SDK compiles Python function
// components (internal/testfixtures/kfpexecutor/pipeline.yaml): the SDK's
// own sh command, the executor input {{$}}, an output passed on as a
// typed input, an optional input left unset, a default, and a container
// component with Concat and IfPresent. The component image is the
// kfpexecutor fixture (a shell, and a python3 whose executor behaves as
// KFP's); the launcher is the operator's kfp-task.
func TestPythonFunctionComponentsRunOnTekton(t *testing.T) {
	ns := namespace(t, "e2e-kfpv2")
	tektonProvider(t, ns)
	demoPipeline(t, ns, "python-functions", "/python.yaml")
	waitFor(t, 4*time.Minute, "Pipeline python-functions synchronised", func() (bool, string) {
		return synchronised(get(t, "Pipeline", ns, "python-functions"))
	})
	create(t, ns, `
kind: Run
metadata: {name: sum}
spec:
  provider: kfp
  pipeline: python-functions
  parameters:
  - {name: a, value: "2.25"}
`)
	waitFor(t, 4*time.Minute, "Run sum Succeeded", func() (bool, string) {
		state, msg := completionState(get(t, "Run", ns, "sum"))
		return state == "Succeeded", state + ": " + msg
	})
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, "sum").Object, "status", "provider", "id")
	var pr tektonv1.PipelineRun
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &pr))
	results := map[string]string{}
	for _, r := range pr.Status.Results {
		results[r.Name] = r.Value.StringVal
	}
	assert.Equal(t, map[string]string{
		"sum":      "3.25",                 // a given, b its default 1.0
		"report":   "total=3.25 note=None", // add's output as a typed input, note absent
		"greeting": "hello y",              // Concat; IfPresent of the unset title gives nothing
	}, results)
	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.NotContains(t, logs, "kfp-task:", "the launcher reported no error")
}
