//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hostile are values that Tekton's substitution or the kubelet's env
// expansion would rewrite if they reached a step as they are.
var hostile = []string{
	`pa$$word`, `$(KFP_RESOURCE)`, `$(context.taskRun.name)`, `$(params.resource)`, `$(KUBERNETES_SERVICE_HOST)`,
	`say "hi" \ and 'bye'`, "two\nlines", "żółć 日本 🚀",
}

// TestUserBytesReachTheProviderUnchanged: every byte a user wrote in a
// Run's parameters, a Pipeline's env and a Provider's parameters arrives at
// the provider step as written (proven from what the fixture provider
// printed on the node).
func TestUserBytesReachTheProviderUnchanged(t *testing.T) {
	ns := namespace(t, "e2e-bytes")
	installProvider(t, ns, "kfp")
	params := map[string]any{"fixture": map[string]any{}}
	for i, v := range hostile {
		params[fmt.Sprintf("p%d", i)] = v
	}
	paramsJSON, _ := json.Marshal(params)
	provider(t, ns, "bytes", images["FIXTURE_PROVIDER_IMAGE"], "{}")
	patch(t, "Provider", ns, "bytes", fmt.Sprintf(`{"spec":{"parameters":%s}}`, paramsJSON))
	waitFor(t, time.Minute, "Provider Ready with the new parameters", func() (bool, string) { return synchronised(get(t, "Provider", ns, "bytes")) })

	var runParams, env []any
	for i, v := range hostile {
		runParams = append(runParams, map[string]any{"name": fmt.Sprintf("p%d", i), "value": v})
		env = append(env, map[string]any{"name": fmt.Sprintf("E%d", i), "value": v})
	}
	run := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "Run", "metadata": map[string]any{"name": "hostile", "namespace": ns},
		"spec": map[string]any{"provider": "bytes", "pipeline": "hostile", "experimentName": "e", "parameters": runParams},
	}}
	pipeline := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "Pipeline", "metadata": map[string]any{"name": "hostile", "namespace": ns},
		"spec": map[string]any{"provider": "bytes", "image": images["FIXTURE_PIPELINE_IMAGE"], "env": env, "framework": map[string]any{"name": "fixture"}},
	}}
	for _, obj := range []*unstructured.Unstructured{run, pipeline} {
		require.NoError(t, cl.Create(context.Background(), obj))
	}
	for _, kind := range []string{"Run", "Pipeline"} {
		waitFor(t, syncTimeout, kind+" synchronised", func() (bool, string) { return synchronised(get(t, kind, ns, "hostile")) })
	}

	var resource struct {
		Spec struct {
			Parameters []struct{ Name, Value string } `json:"parameters"`
			Env        []struct{ Name, Value string } `json:"env"`
		} `json:"spec"`
	}
	var config struct {
		Spec struct {
			Parameters map[string]any `json:"parameters"`
		} `json:"spec"`
	}
	receivedJSON(t, ns, "Run", "hostile", "received resource ", &resource)
	require.Len(t, resource.Spec.Parameters, len(hostile))
	for i, p := range resource.Spec.Parameters {
		assert.Equal(t, hostile[i], p.Value, "Run parameter %s", p.Name)
	}
	receivedJSON(t, ns, "Run", "hostile", "received provider config ", &config)
	for i, v := range hostile {
		assert.Equal(t, v, config.Spec.Parameters[fmt.Sprintf("p%d", i)], "Provider parameter p%d", i)
	}
	resource.Spec.Env = nil
	receivedJSON(t, ns, "Pipeline", "hostile", "received resource ", &resource)
	require.Len(t, resource.Spec.Env, len(hostile))
	for i, e := range resource.Spec.Env {
		assert.Equal(t, hostile[i], e.Value, "Pipeline env %s", e.Name)
	}
}

// receivedJSON decodes what the fixture provider printed after marker in
// the provider step of the resource's create run.
func receivedJSON(t *testing.T, ns, kind, name, marker string, into any) {
	t.Helper()
	for _, pr := range runsOf(t, ns, kind, name) {
		if pr.Labels["pipelines.kubeflow.org/operation"] != "create" || succeededCondition(&pr) != "True" {
			continue
		}
		for _, pod := range podsOf(t, ns, pr.Name) {
			if !hasContainer(pod, "step-provider") { // a pipeline's compile pod
				continue
			}
			logs, err := clientset.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "step-provider"}).DoRaw(context.Background())
			require.NoError(t, err)
			s := bufio.NewScanner(strings.NewReader(string(logs)))
			s.Buffer(make([]byte, 1<<20), 1<<20)
			for s.Scan() {
				if _, rest, ok := strings.Cut(s.Text(), marker); ok {
					require.NoError(t, json.Unmarshal([]byte(rest), into), "%s", rest)
					return
				}
			}
		}
	}
	t.Fatalf("no %q line in the provider step's log of %s %s's create run", marker, kind, name)
}

func hasContainer(pod corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}
