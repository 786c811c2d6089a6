//go:build e2e

package e2e

// The Tekton provider, the project's own backend, on the real node: the
// demo ML pipeline compiled by the static compiler, uploaded as a Tekton
// Pipeline, run by a Run to completion (its metric in the logs, its
// artifacts on the volume), a failing task named in the Run, and a
// RunSchedule's CronJob starting exactly one run per scheduled time.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
)

// tektonProvider installs the Tekton provider "kfp" with the provider chart,
// its artifacts on a local volume, and returns that volume's directory.
func tektonProvider(t *testing.T, ns string) string {
	t.Helper()
	dir := strings.TrimSpace(run(t, filepath.Join(root, "hack", "local-volume.sh"), ns, "kfp-artifacts"))
	t.Cleanup(func() {
		if !t.Failed() {
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local-" + ns + "-kfp-artifacts"}}
			_ = cl.Delete(context.Background(), pv)
			_ = os.RemoveAll(dir)
		}
	})
	run(t, filepath.Join(root, "bin", "helm"), "install", "kfp", filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--namespace", ns, "-f", filepath.Join(root, "config", "provider", "values.yaml"),
		"--set", "provider.image="+images["TEKTON_PROVIDER_IMAGE"],
		"--set", "provider.frameworks[0].image="+images["STATIC_COMPILER_IMAGE"])
	waitFor(t, 2*time.Minute, "Provider "+ns+"/kfp Ready", func() (bool, string) {
		return readyIs(get(t, "Provider", ns, "kfp"), "True")
	})
	return dir
}

// demoPipeline creates Pipeline name of the demo pipeline image, compiled
// by the static compiler from the IR file there.
func demoPipeline(t *testing.T, ns, name, file string) {
	t.Helper()
	create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: %s}
spec:
  provider: kfp
  image: %s
  framework: {name: static, parameters: {pipelineFile: %s}}
`, name, images["DEMO_PIPELINE_DIGEST_REF"], file))
}

func completionState(obj *unstructured.Unstructured) (string, string) {
	if obj == nil {
		return "", ""
	}
	state, _, _ := unstructured.NestedString(obj.Object, "status", "completionState")
	msg, _, _ := unstructured.NestedString(obj.Object, "status", "completionMessage")
	return state, msg
}

// fixturePipeline creates Pipeline name of the fixture pipeline image,
// compiled by the fixture compiler, on provider kfp.
func fixturePipeline(t *testing.T, ns, name string) {
	t.Helper()
	create(t, ns, fmt.Sprintf("kind: Pipeline\nmetadata: {name: %s}\nspec: {provider: kfp, image: %s, framework: {name: fixture}}\n",
		name, images["FIXTURE_PIPELINE_IMAGE"]))
}

// syncedDemoPipeline creates Pipeline name of the demo pipeline image
// (demoPipeline) and waits up to 4 minutes for it to be synchronised.
func syncedDemoPipeline(t *testing.T, ns, name, file string) {
	t.Helper()
	demoPipeline(t, ns, name, file)
	waitFor(t, 4*time.Minute, "Pipeline "+name+" synchronised", func() (bool, string) {
		return synchronised(get(t, "Pipeline", ns, name))
	})
}

// waitRunState waits up to timeout for Run name's completion state to be
// state (Succeeded, Failed).
func waitRunState(t *testing.T, timeout time.Duration, ns, name, state string) {
	t.Helper()
	waitFor(t, timeout, "Run "+name+" "+state, func() (bool, string) {
		got, msg := completionState(get(t, "Run", ns, name))
		return got == state, got + ": " + msg
	})
}

func TestTektonProviderRunsTheDemoPipeline(t *testing.T) {
	ns := namespace(t, "e2e-tekton")
	volume := tektonProvider(t, ns)
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	create(t, ns, `
kind: Experiment
metadata: {name: tuning}
spec: {provider: kfp}
`)
	waitFor(t, 4*time.Minute, "Pipeline demo-ml synchronised", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, "demo-ml")) })
	var versions tektonv1.PipelineList
	require.NoError(t, cl.List(context.Background(), &versions, client.InNamespace(ns), client.MatchingLabels{"pipelines.kubeflow.org/pipeline": "demo-ml"}))
	require.Len(t, versions.Items, 1, "one Tekton Pipeline for the version")
	assert.Len(t, versions.Items[0].Spec.Tasks, 3)

	applied := time.Now()
	create(t, ns, `
kind: Run
metadata: {name: train}
spec:
  provider: kfp
  pipeline: demo-ml
  experimentName: tuning
  parameters:
  - {name: rows, value: "400"}
  - {name: learning_rate, value: "0.2"}
`)
	var pr tektonv1.PipelineRun
	waitFor(t, 3*time.Minute, "the Run's PipelineRun started", func() (bool, string) {
		id, _, _ := unstructured.NestedString(get(t, "Run", ns, "train").Object, "status", "provider", "id")
		if id == "" || cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &pr) != nil {
			return false, "no PipelineRun yet"
		}
		return pr.Status.StartTime != nil, "not started"
	})
	started := pr.Status.StartTime.Time
	waitRunState(t, 4*time.Minute, ns, "train", "Succeeded")
	t.Logf("Run train: PipelineRun %s started %.1f s after the Run was created, completion recorded %.1f s after",
		pr.Name, started.Sub(applied).Seconds(), time.Since(applied).Seconds())
	require.NoError(t, cl.Get(context.Background(), client.ObjectKeyFromObject(&pr), &pr))
	assert.Equal(t, "tuning", pr.Labels["pipelines.kubeflow.org/experiment"])
	assert.Equal(t, "train", pr.Labels["pipelines.kubeflow.org/run"])
	assert.Equal(t, "kfp-pipeline-runner", pr.Spec.TaskRunTemplate.ServiceAccountName)

	logs := tkn(t, "pipelinerun", "logs", pr.Name, "-n", ns)
	assert.Contains(t, logs, "[train : main] epoch 5/5")
	assert.Regexp(t, `\[evaluate : main\] accuracy 0\.\d{4}`, logs)
	for _, artifact := range []string{"generate/dataset", "train/model"} {
		info, err := os.Stat(filepath.Join(volume, ns, pr.Name, artifact))
		if assert.NoError(t, err, "artifact %s in the repository", artifact) {
			assert.Greater(t, info.Size(), int64(0))
		}
	}
	for _, p := range podsOf(t, ns, pr.Name) {
		assert.Nil(t, p.Spec.AutomountServiceAccountToken, "pod %s", p.Name)
		for _, v := range p.Spec.Volumes {
			assert.NotContains(t, v.Name, "kube-api-access", "pipeline pod %s holds no API token (its account does not mount one)", p.Name)
		}
	}

	// A failing task: generate refuses fewer than 10 rows.
	create(t, ns, `
kind: Run
metadata: {name: too-small}
spec:
  provider: kfp
  pipeline: demo-ml
  parameters: [{name: rows, value: "5"}]
`)
	waitRunState(t, 4*time.Minute, ns, "too-small", "Failed")
	_, msg := completionState(get(t, "Run", ns, "too-small"))
	assert.Contains(t, msg, "task generate failed")

	// A parameter the pipeline does not have is the provider's error, in the Run's condition.
	create(t, ns, `
kind: Run
metadata: {name: typo}
spec:
  provider: kfp
  pipeline: demo-ml
  parameters: [{name: rowz, value: "50"}]
`)
	waitFor(t, 3*time.Minute, "Run typo refused by the provider", func() (bool, string) {
		_, _, m := condition(get(t, "Run", ns, "typo"), "Ready")
		return strings.Contains(m, `"rowz": the pipeline has no such input parameter`), m
	})

	// Deletes go through the provider too: the Run's PipelineRun, then every
	// version's Tekton Pipeline.
	remove(t, "Run", ns, "train")
	waitFor(t, 3*time.Minute, "Run train and its PipelineRun deleted", func() (bool, string) {
		err := cl.Get(context.Background(), client.ObjectKeyFromObject(&pr), &tektonv1.PipelineRun{})
		return get(t, "Run", ns, "train") == nil && err != nil, fmt.Sprintf("PipelineRun: %v", err)
	})
	remove(t, "Pipeline", ns, "demo-ml")
	waitFor(t, 3*time.Minute, "Pipeline demo-ml and its Tekton Pipeline deleted", func() (bool, string) {
		require.NoError(t, cl.List(context.Background(), &versions, client.InNamespace(ns), client.MatchingLabels{"pipelines.kubeflow.org/pipeline": "demo-ml"}))
		return get(t, "Pipeline", ns, "demo-ml") == nil && len(versions.Items) == 0, fmt.Sprintf("%d Tekton Pipelines", len(versions.Items))
	})
}

// TestScheduledRunsAreOnePerScheduledTime: a RunSchedule's CronJob (run by
// the real kube-controller-manager) starts a PipelineRun named after the
// scheduled time; a retried trigger pod of the same Job starts no second.
func TestScheduledRunsAreOnePerScheduledTime(t *testing.T) {
	ns := namespace(t, "e2e-schedule")
	tektonProvider(t, ns)
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	create(t, ns, `
kind: RunSchedule
metadata: {name: every-minute}
spec:
  provider: kfp
  pipeline: demo-ml
  parameters: [{name: rows, value: "50"}]
  schedule: {cronExpression: "* * * * *"}
`)
	waitFor(t, 4*time.Minute, "RunSchedule synchronised", func() (bool, string) { return synchronised(get(t, "RunSchedule", ns, "every-minute")) })
	scheduled := func() []tektonv1.PipelineRun {
		var l tektonv1.PipelineRunList
		require.NoError(t, cl.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{"pipelines.kubeflow.org/runschedule": "every-minute"}))
		return l.Items
	}
	waitFor(t, 3*time.Minute, "a scheduled PipelineRun", func() (bool, string) { return len(scheduled()) > 0, "none yet" })
	first := scheduled()[0]
	assert.NotEmpty(t, first.Annotations["pipelines.kubeflow.org/scheduled-time"])

	// Retry the Job that made it: a new pod from the Job's own template.
	var job batchv1.Job
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: first.Name}, &job))
	// Without the controller-uid labels, so the Job does not adopt it (and
	// delete it with itself when the CronJob's history limit prunes the Job);
	// the job-name label it keeps is what the trigger reads.
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		if !strings.HasSuffix(k, "controller-uid") {
			labels[k] = v
		}
	}
	require.Equal(t, first.Name, labels[batchv1.JobNameLabel])
	retry := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "retry-", Labels: labels},
		Spec: *job.Spec.Template.Spec.DeepCopy()}
	retry.Spec.RestartPolicy = corev1.RestartPolicyNever
	require.NoError(t, cl.Create(context.Background(), retry))
	waitFor(t, 2*time.Minute, "the retried trigger ended", func() (bool, string) {
		if err := cl.Get(context.Background(), client.ObjectKeyFromObject(retry), retry); err != nil {
			return false, err.Error()
		}
		return retry.Status.Phase == corev1.PodSucceeded, string(retry.Status.Phase)
	})
	logs, err := clientset.CoreV1().Pods(ns).GetLogs(retry.Name, &corev1.PodLogOptions{}).Stream(context.Background())
	require.NoError(t, err)
	out, _ := io.ReadAll(logs)
	assert.Contains(t, string(out), "created false")
	count := 0
	for _, pr := range scheduled() {
		if pr.Annotations["pipelines.kubeflow.org/scheduled-time"] == first.Annotations["pipelines.kubeflow.org/scheduled-time"] {
			count++
		}
	}
	assert.Equal(t, 1, count, "one run for the scheduled time %s", first.Annotations["pipelines.kubeflow.org/scheduled-time"])

	remove(t, "RunSchedule", ns, "every-minute")
	waitFor(t, 2*time.Minute, "the CronJob removed with the RunSchedule", func() (bool, string) {
		var l batchv1.CronJobList
		require.NoError(t, cl.List(context.Background(), &l, client.InNamespace(ns)))
		return len(l.Items) == 0, fmt.Sprintf("%d CronJobs", len(l.Items))
	})
}

// TestRunConfigurationChain: RunConfiguration examples runs the demo
// pipeline every minute; report is triggered by its success and takes its
// model's location as a parameter. The operator is down while examples'
// first run completes: report still runs exactly once for it, with the
// artifact's location, through the Tekton provider.
func TestRunConfigurationChain(t *testing.T) {
	ns := namespace(t, "e2e-chain")
	tektonProvider(t, ns)
	demoPipeline(t, ns, "demo-ml", "/pipeline.yaml")
	demoPipeline(t, ns, "consumer", "/consumer.yaml")
	reportOnExamples(t, ns, "consumer")
	examplesEveryMinute(t, ns)
	waitFor(t, 4*time.Minute, "RunConfiguration examples synchronised", func() (bool, string) {
		return synchronised(get(t, "RunConfiguration", ns, "examples"))
	})

	// The operator goes down; the CronJob (kube-controller-manager) and
	// Tekton run examples' first scheduled run without it.
	scale := func(replicas string) {
		run(t, "kubectl", "--kubeconfig", filepath.Join(root, "bin", "kubeconfig"), "scale", "deployment/kfp-tekton-operator",
			"-n", "kfp-tekton-operator", "--replicas="+replicas)
	}
	replicas := operatorReplicas(t) // the chart's 2, unless someone changed it
	scale("0")
	t.Cleanup(func() { scale(replicas) })
	var first tektonv1.PipelineRun
	waitFor(t, 4*time.Minute, "examples' first scheduled run succeeded while the operator is down", func() (bool, string) {
		var l tektonv1.PipelineRunList
		require.NoError(t, cl.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{"pipelines.kubeflow.org/runconfiguration": "examples"}))
		for _, pr := range l.Items {
			if succeededCondition(&pr) == "True" {
				first = pr
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d runs, none succeeded", len(l.Items))
	})
	scale(replicas)

	var location string
	waitFor(t, 3*time.Minute, "examples records its latest succeeded run", func() (bool, string) {
		rc := get(t, "RunConfiguration", ns, "examples")
		arts, _, _ := unstructured.NestedSlice(rc.Object, "status", "latestRuns", "succeeded", "artifacts")
		if len(arts) == 0 {
			return false, "no latestRuns.succeeded artifacts"
		}
		location, _ = arts[0].(map[string]any)["location"].(string)
		return true, ""
	})
	// The first run to be recorded may be a later one if several ended while the operator was down.
	assert.True(t, strings.HasPrefix(location, "file:///kfp/artifacts/"+ns+"/"), location)
	assert.True(t, strings.HasSuffix(location, "/train/model"), location)

	var downstream unstructured.Unstructured
	waitFor(t, 3*time.Minute, "report triggered", func() (bool, string) {
		runs := list(t, ns, "Run")
		for _, r := range runs {
			if r.GetLabels()["pipelines.kubeflow.org/trigger"] == "runConfiguration" {
				downstream = r
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d Runs", len(runs))
	})
	waitFor(t, 4*time.Minute, "report's run Succeeded", func() (bool, string) {
		state, msg := completionState(get(t, "Run", ns, downstream.GetName()))
		return state == "Succeeded", state + ": " + msg
	})
	r := get(t, "Run", ns, downstream.GetName())
	id, _, _ := unstructured.NestedString(r.Object, "status", "provider", "id")
	dep, _, _ := unstructured.NestedString(r.Object, "status", "dependencies", "runConfigurations", "examples", "providerId")
	logs := tkn(t, "pipelinerun", "logs", id, "-n", ns)
	assert.Contains(t, logs, "[report : main] model = file:///kfp/artifacts/"+ns+"/"+dep+"/train/model", "the upstream artifact's location as the parameter")
	t.Logf("examples' first run %s; report ran for upstream run %s", first.Name, dep)

	// Every downstream Run is for a distinct upstream run that succeeded.
	var upstream tektonv1.PipelineRunList
	require.NoError(t, cl.List(context.Background(), &upstream, client.InNamespace(ns), client.MatchingLabels{"pipelines.kubeflow.org/runconfiguration": "examples"}))
	succeeded := map[string]bool{} // by the trigger.source label a Run for that upstream run carries
	for _, pr := range upstream.Items {
		if succeededCondition(&pr) == "True" {
			succeeded[examplesSource(pr.Name)] = true
		}
	}
	for _, r := range list(t, ns, "Run") {
		if r.GetLabels()["pipelines.kubeflow.org/trigger"] == "runConfiguration" {
			source := r.GetLabels()["pipelines.kubeflow.org/trigger.source"]
			assert.True(t, succeeded[source], "Run %s was triggered by %s, a succeeded run of examples", r.GetName(), source)
		}
	}
	remove(t, "RunConfiguration", ns, "examples") // stop its schedule
}

// examplesEveryMinute creates RunConfiguration "examples" of Pipeline
// demo-ml, scheduled every minute, its model as artifact "model".
func examplesEveryMinute(t *testing.T, ns string) {
	t.Helper()
	create(t, ns, `
kind: RunConfiguration
metadata: {name: examples}
spec:
  run:
    provider: kfp
    pipeline: demo-ml
    parameters: [{name: rows, value: "100"}]
    artifacts: [{name: model, path: "train:model:0"}]
  triggers:
    schedules: [{cronExpression: "* * * * *"}]
`)
}

// examplesSource is the trigger.source label of the Run that examples'
// run id triggers.
func examplesSource(id string) string { return naming.LabelValue("examples/" + id) }

// reportOnExamples creates RunConfiguration "report" of pipeline, triggered
// by RunConfiguration "examples" and taking its artifact "model" as the
// parameter model_uri.
func reportOnExamples(t *testing.T, ns, pipeline string) {
	t.Helper()
	create(t, ns, fmt.Sprintf(`
kind: RunConfiguration
metadata: {name: report}
spec:
  run:
    provider: kfp
    pipeline: %s
    parameters:
    - name: model_uri
      valueFrom: {runConfigurationRef: {name: examples, outputArtifact: model}}
  triggers:
    runConfigurations: [examples]
`, pipeline))
}
