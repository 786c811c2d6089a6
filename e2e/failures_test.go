//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// provider creates a Provider running the fixture provider image with the
// given fixture behaviour table (spec.parameters.fixture), using the
// service account the chart-installed provider "kfp" brought.
func provider(t *testing.T, ns, name, image, fixture string) {
	t.Helper()
	if fixture == "" {
		fixture = "{}"
	}
	create(t, ns, fmt.Sprintf(`
kind: Provider
metadata: {name: %s}
spec:
  image: %s
  serviceAccount: kfp-provider
  parameters: {fixture: %s}
  frameworks: [{name: fixture, image: %s}]
`, name, image, fixture, images["FIXTURE_COMPILER_IMAGE"]))
	waitFor(t, 2*time.Minute, "Provider "+name+" Ready", func() (bool, string) { return readyIs(get(t, "Provider", ns, name), "True") })
}

func tkn(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "bin", "tkn"), append(args, "--kubeconfig", filepath.Join(root, "bin", "kubeconfig"))...).CombinedOutput()
	require.NoError(t, err, "tkn %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// TestProviderErrorIsReportedRetriedAndRecovers: a provider that fails
// reports in its own words; the failed operation is a failed PipelineRun
// (in tkn too) whose results survive; it is retried with backoff, and
// succeeds once the provider does.
func TestProviderErrorIsReportedRetriedAndRecovers(t *testing.T) {
	ns := namespace(t, "e2e-retry")
	installProvider(t, ns, "kfp")
	const words = `backend quota exceeded for "tuning" <&> try later`
	provider(t, ns, "flaky", images["FIXTURE_PROVIDER_IMAGE"], fmt.Sprintf(`{"Experiment/tuning": {"error": %q, "exitCode": 1}}`, words))
	create(t, ns, `
kind: Experiment
metadata: {name: tuning}
spec: {provider: flaky, description: retried}
`)
	waitFor(t, 2*time.Minute, "the provider's words in the condition", func() (bool, string) {
		s, r, m := condition(get(t, "Experiment", ns, "tuning"), "Ready")
		return s == "False" && r == "PipelineRunFailed" && strings.Contains(m, words), fmt.Sprintf("Ready=%s %s: %s", s, r, m)
	})
	// Retried as a new attempt, after a backoff.
	var failed []tektonv1.PipelineRun
	waitFor(t, 2*time.Minute, "a second failed attempt", func() (bool, string) {
		failed = nil
		for _, pr := range runsOf(t, ns, "Experiment", "tuning") {
			if succeededCondition(&pr) == "False" {
				failed = append(failed, pr)
			}
		}
		return len(failed) >= 2, fmt.Sprintf("%d failed attempts", len(failed))
	})
	_, _, msg := condition(get(t, "Experiment", ns, "tuning"), "Ready")
	// The provider recovers before the next attempt (its backoff is 20 s by now).
	patch(t, "Provider", ns, "flaky", `{"spec":{"parameters":{"fixture":null}}}`)
	assert.Contains(t, msg, "attempt", "the condition says which attempt: %s", msg)

	// A failed backend operation is a failed run, and its results survive.
	pr := failed[0]
	taskRuns := &tektonv1.TaskRunList{}
	require.NoError(t, cl.List(context.Background(), taskRuns, client.InNamespace(ns), client.MatchingLabels{"tekton.dev/pipelineRun": pr.Name}))
	require.Len(t, taskRuns.Items, 1)
	var providerError string
	for _, r := range taskRuns.Items[0].Status.Results {
		if r.Name == "provider-error" {
			providerError = r.Value.StringVal
		}
	}
	assert.Equal(t, words, providerError, "the failed TaskRun keeps the provider-error result")
	listed := tkn(t, "pipelinerun", "list", "-n", ns, "--label", "pipelines.kubeflow.org/owner.name=tuning")
	assert.Contains(t, listed, pr.Name)
	assert.Contains(t, listed, "Failed", "tkn shows the failed operation as failed:\n%s", listed)
	described := tkn(t, "pipelinerun", "describe", pr.Name, "-n", ns)
	assert.Contains(t, described, "backend quota exceeded", "tkn pr describe shows the provider's error:\n%s", described)

	// The provider recovers: the next attempt succeeds.
	waitFor(t, 3*time.Minute, "synchronised after the provider recovered", func() (bool, string) {
		return synchronised(get(t, "Experiment", ns, "tuning"))
	})
	listed = tkn(t, "pipelinerun", "list", "-n", ns, "--label", "pipelines.kubeflow.org/owner.name=tuning")
	assert.Contains(t, listed, "Succeeded", "tkn lists the successful attempt:\n%s", listed)
}

// TestImageThatDoesNotExist: a provider image that vanished from the
// registry after the Provider pinned it, and a pipeline image that never
// existed, each fail the operation with a condition naming the image and
// the step.
func TestImageThatDoesNotExist(t *testing.T) {
	ns := namespace(t, "e2e-image")
	installProvider(t, ns, "kfp")

	t.Run("provider image", func(t *testing.T) {
		// A copy of the fixture provider under a name of its own, deleted once pinned.
		src, err := remote.Image(mustRef(t, images["FIXTURE_PROVIDER_IMAGE"]))
		require.NoError(t, err)
		ref := mustRef(t, images["REGISTRY"]+"/fixtures/vanishing-"+ns+":1")
		require.NoError(t, remote.Write(ref, src))
		provider(t, ns, "vanishing", ref.String(), "")
		pinned, _, _ := unstructured.NestedString(get(t, "Provider", ns, "vanishing").Object, "status", "image")
		require.Contains(t, pinned, "@sha256:")
		digest := mustRef(t, pinned)
		require.NoError(t, remote.Delete(digest))

		create(t, ns, `
kind: Experiment
metadata: {name: orphaned}
spec: {provider: vanishing}
`)
		waitFor(t, 3*time.Minute, "a condition naming the missing image and step", func() (bool, string) {
			s, r, m := condition(get(t, "Experiment", ns, "orphaned"), "Ready")
			return s == "False" && strings.Contains(m, `step "provider"`) && strings.Contains(m, digest.Context().RepositoryStr()),
				fmt.Sprintf("Ready=%s %s: %s", s, r, m)
		})
	})

	t.Run("pipeline image", func(t *testing.T) {
		missing := images["REGISTRY"] + "/fixtures/never-pushed:1"
		create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: imageless}
spec: {provider: kfp, image: %s, framework: {name: fixture}}
`, missing))
		waitFor(t, 3*time.Minute, "a condition naming the missing image and step", func() (bool, string) {
			s, r, m := condition(get(t, "Pipeline", ns, "imageless"), "Ready")
			return s == "False" && strings.Contains(m, "compile") && strings.Contains(m, "never-pushed"),
				fmt.Sprintf("Ready=%s %s: %s", s, r, m)
		})
	})
}

// TestCompilerExitsNonZero: a compiler failure fails the operation with the
// compile step named, and never reaches the provider.
func TestCompilerExitsNonZero(t *testing.T) {
	ns := namespace(t, "e2e-compile")
	installProvider(t, ns, "kfp")
	create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: uncompilable}
spec:
  provider: kfp
  image: %s
  framework: {name: fixture, parameters: {fixture-fail: "unsupported component"}}
`, images["FIXTURE_PIPELINE_IMAGE"]))
	waitFor(t, 3*time.Minute, "a condition naming the compile step", func() (bool, string) {
		s, r, m := condition(get(t, "Pipeline", ns, "uncompilable"), "Ready")
		return s == "False" && r == "PipelineRunFailed" && strings.Contains(m, "compile"), fmt.Sprintf("Ready=%s %s: %s", s, r, m)
	})
	for _, pr := range runsOf(t, ns, "Pipeline", "uncompilable") {
		for _, pod := range podsOf(t, ns, pr.Name) {
			for _, c := range pod.Status.ContainerStatuses {
				if c.Name == "step-provider" && c.State.Terminated != nil {
					assert.NotEqual(t, "Completed", c.State.Terminated.Reason, "the provider step never ran after a failed compile")
				}
			}
		}
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s)
	require.NoError(t, err)
	return ref
}

// TestLongProviderErrorKeepsItsWords: a 5 KB provider error made of the
// characters JSON escapes most (<, &, quotes, newlines) overflows Tekton's
// 4096-byte termination message unless cut on its escaped size; cut so, the
// provider's own words reach the condition, marked as truncated.
func TestLongProviderErrorKeepsItsWords(t *testing.T) {
	ns := namespace(t, "e2e-longerror")
	installProvider(t, ns, "kfp")
	words := "quota <exceeded> & \"denied\"\n" + strings.Repeat("<&\"\n", 1250)
	provider(t, ns, "verbose", images["FIXTURE_PROVIDER_IMAGE"], fmt.Sprintf(`{"Experiment/chatty": {"error": %q, "exitCode": 1}}`, words))
	create(t, ns, `
kind: Experiment
metadata: {name: chatty}
spec: {provider: verbose}
`)
	waitFor(t, 2*time.Minute, "the provider's words, truncated, in the condition", func() (bool, string) {
		s, r, m := condition(get(t, "Experiment", ns, "chatty"), "Ready")
		return s == "False" && strings.Contains(m, "quota <exceeded> & \"denied\"") && strings.Contains(m, "…(truncated)"),
			fmt.Sprintf("Ready=%s %s: %.300s", s, r, m)
	})
}
