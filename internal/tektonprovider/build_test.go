package tektonprovider

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

const launcher = "registry.example/provider@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func demoIR(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../kfpir/testdata/demo.yaml")
	require.NoError(t, err)
	return data
}

func pipelineResource() contract.Resource {
	return contract.Resource{ContractVersion: contract.Version, Kind: "Pipeline", Version: "1.0-abc",
		Metadata: contract.Metadata{Name: "demo", Namespace: "team-a", UID: "u-1"}}
}

func config(params map[string]string) contract.ProviderConfig {
	cfg := contract.ProviderConfig{ContractVersion: contract.Version, Name: "kfp", Namespace: "team-a",
		Spec: pipelinesv1beta1.ProviderSpec{ServiceAccount: "kfp-provider", Parameters: map[string]apiextensionsv1.JSON{}}}
	for k, v := range params {
		cfg.Spec.Parameters[k] = apiextensionsv1.JSON{Raw: []byte(v)}
	}
	return cfg
}

func TestPipelineForIsRestrictedAndLabelled(t *testing.T) {
	p, err := PipelineFor(demoIR(t), pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	id := PipelineID(pipelineResource())
	assert.Equal(t, PipelineVersionName(id, "1.0-abc"), p.Name)
	assert.Equal(t, id, p.Labels[contract.LabelPipelineID])
	assert.Equal(t, "1.0-abc", p.Annotations[contract.AnnotationPipelineVersion])
	require.Len(t, p.Spec.Tasks, 3)
	for _, task := range p.Spec.Tasks {
		sc := task.TaskSpec.StepTemplate.SecurityContext
		require.NotNil(t, sc, task.Name)
		assert.True(t, *sc.RunAsNonRoot)
		assert.False(t, *sc.AllowPrivilegeEscalation)
		assert.Equal(t, "ALL", string(sc.Capabilities.Drop[0]))
	}
}

func TestPipelineForRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		ir   []byte
		cfg  contract.ProviderConfig
		want string
	}{
		"not IR":       {[]byte("hello: world"), config(nil), "schemaVersion is missing"},
		"object store": {nil, contract.ProviderConfig{ArtifactRepository: &contract.ArtifactLocation{Source: "provider", Location: "s3://bucket/x"}}, "with an endpoint and credentials"},
	} {
		t.Run(name, func(t *testing.T) {
			ir := tc.ir
			if ir == nil {
				ir = demoIR(t)
			}
			_, err := PipelineFor(ir, pipelineResource(), tc.cfg, "team-a", launcher)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSettings(t *testing.T) {
	for name, tc := range map[string]struct {
		params map[string]string
		want   string // error substring, or "" for success
	}{
		"defaults":              {nil, ""},
		"claim":                 {map[string]string{ParamArtifactsClaim: `"artifacts"`}, ""},
		"own service account":   {map[string]string{ParamPipelineServiceAccount: `"kfp-provider"`}, "Provider's own service account"},
		"not a string":          {map[string]string{ParamArtifactsClaim: `42`}, "must be a string"},
		"bad claim name":        {map[string]string{ParamArtifactsClaim: `"Not/Valid"`}, "not a valid object name"},
		"empty service account": {map[string]string{ParamPipelineServiceAccount: `""`}, "not a valid object name"},
		"bad size":              {map[string]string{ParamArtifactsStorage: `"-1Gi"`}, "positive quantity"},
		"PVC account":           {map[string]string{ParamPVCServiceAccount: `"kfp-pvc-manager"`}, ""},
		"PVC account: own":      {map[string]string{ParamPVCServiceAccount: `"kfp-provider"`}, "Provider's own service account"},
		"PVC account: steps'": {map[string]string{ParamPipelineServiceAccount: `"runner"`, ParamPVCServiceAccount: `"runner"`},
			"the account every pipeline step runs as"},
		"PVC account: bad name": {map[string]string{ParamPVCServiceAccount: `"No_Name"`}, "not a valid object name"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := SettingsFrom(config(tc.params))
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, s.PipelineServiceAccount)
		})
	}
}

func TestPipelineRunFor(t *testing.T) {
	p, err := PipelineFor(demoIR(t), pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	settings, err := SettingsFrom(config(map[string]string{ParamArtifactsClaim: `"artifacts"`}))
	require.NoError(t, err)
	spec := pipelinesv1beta1.RunSpec{ExperimentName: "exp", Parameters: []pipelinesv1beta1.RuntimeParameter{
		{Name: "rows", Value: "300"}, {Name: "learning_rate", Value: "price $5, żółć \"q\"\n"}}}
	pr, err := PipelineRunFor(RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Spec: spec,
		Labels: map[string]string{contract.LabelRun: "my-run"}, Settings: settings, Annotations: map[string]string{contract.AnnotationResource: "Run team-a/my-run"}})
	require.NoError(t, err)
	assert.Equal(t, p.Name, pr.Spec.PipelineRef.Name)
	assert.Equal(t, "default", pr.Spec.TaskRunTemplate.ServiceAccountName)
	assert.Equal(t, "artifacts", pr.Spec.Workspaces[0].PersistentVolumeClaim.ClaimName)
	assert.Equal(t, "team-a", pr.Spec.Workspaces[0].SubPath, "only the namespace's directory of the claim")
	assert.Equal(t, contract.ManagedByTektonProvider, pr.Labels[contract.LabelManagedBy])
	assert.Equal(t, "exp", pr.Labels[contract.LabelExperiment])
	assert.Equal(t, "my-run", pr.Labels[contract.LabelRun])
	assert.Equal(t, p.Labels[contract.LabelPipelineVersion], pr.Labels[contract.LabelPipelineVersion])
	assert.Contains(t, pr.Annotations[contract.AnnotationOutputs], `"component":"train","output":"model"`, "where the artifacts will be")
	assert.Equal(t, "Run team-a/my-run", pr.Annotations[contract.AnnotationResource])
	values := map[string]string{}
	for _, param := range pr.Spec.Params {
		values[param.Name] = param.Value.StringVal
	}
	assert.Equal(t, map[string]string{"rows": "300", "learning_rate": "price $5, żółć \"q\"\n"}, values, "values unchanged")

	settings.ArtifactsClaim = ""
	pr, err = PipelineRunFor(RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Settings: settings})
	require.NoError(t, err)
	assert.Equal(t, "1Gi", pr.Spec.Workspaces[0].VolumeClaimTemplate.Spec.Resources.Requests.Storage().String(), "a claim of the run's own")
	assert.Empty(t, pr.Spec.Workspaces[0].SubPath, "no other run mounts the run's own claim")
}

func TestRunParamsRefuses(t *testing.T) {
	p, err := PipelineFor(demoIR(t), pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		param pipelinesv1beta1.RuntimeParameter
		want  string
	}{
		"undeclared":     {pipelinesv1beta1.RuntimeParameter{Name: "nope", Value: "1"}, `"nope": the pipeline has no such input parameter (it has: learning_rate, rows)`},
		"kubelet escape": {pipelinesv1beta1.RuntimeParameter{Name: "rows", Value: "pa$$word"}, `contains "$$"`},
		"variable":       {pipelinesv1beta1.RuntimeParameter{Name: "rows", Value: "$(context.taskRun.name)"}, `contains "$("`},
		"valueFrom": {pipelinesv1beta1.RuntimeParameter{Name: "rows", ValueFrom: &pipelinesv1beta1.ValueFrom{
			RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: "a", OutputArtifact: "b"}}}, "valueFrom was not resolved"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RunParams(pipelinesv1beta1.RunSpec{Parameters: []pipelinesv1beta1.RuntimeParameter{tc.param}}, p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCronSchedule(t *testing.T) {
	for expr, want := range map[string]string{
		"*/5 * * * *":                     "*/5 * * * *",
		"0 0 2 * * *":                     "0 2 * * *",
		"CRON_TZ=Europe/Berlin 0 2 * * *": "Europe/Berlin|0 2 * * *",
		"@hourly":                         "@hourly",
		"30 0 2 * * *":                    "error:seconds field must be 0",
		"CRON_TZ=Mars/Base 0 2 * * *":     "error:unknown time zone",
		"99 99 99 99 99":                  "error:",
	} {
		schedule, tz, err := CronSchedule(expr)
		if msg, isErr := strings.CutPrefix(want, "error:"); isErr {
			require.Error(t, err, expr)
			assert.Contains(t, err.Error(), msg, expr)
			continue
		}
		require.NoError(t, err, expr)
		got := schedule
		if tz != nil {
			got = *tz + "|" + schedule
		}
		assert.Equal(t, want, got, expr)
	}
}

func TestScheduledTimeAndWindow(t *testing.T) {
	due, err := meta.ScheduledTime("nightly-rabc-29433120")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(29433120*60, 0).UTC(), due)
	for _, bad := range []string{"nightly", "nightly-", "nightly-12a", "nightly-+5", "nightly-05"} {
		_, err := meta.ScheduledTime(bad)
		assert.Error(t, err, bad)
	}
	start := due.Add(-time.Hour)
	assert.True(t, InWindow(due, time.Time{}, time.Time{}))
	assert.True(t, InWindow(due, start, due))
	assert.False(t, InWindow(due, due.Add(time.Minute), time.Time{}))
	assert.False(t, InWindow(due, time.Time{}, due.Add(-time.Minute)))
}

func TestCronJobForCarriesTheRunTemplate(t *testing.T) {
	p, err := PipelineFor(demoIR(t), pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	settings, _ := SettingsFrom(config(map[string]string{ParamArtifactsClaim: `"artifacts"`}))
	template, err := PipelineRunFor(RunInputs{Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Settings: settings, Annotations: map[string]string{contract.AnnotationResource: "RunSchedule team-a/nightly"},
		Spec: pipelinesv1beta1.RunSpec{Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "rows", Value: "50"}}}})
	require.NoError(t, err)
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cj, err := CronJobFor(CronJobInputs{Name: "nightly", Namespace: "team-a", Template: template, Image: launcher, ServiceAccount: "kfp-provider",
		Schedule: pipelinesv1beta1.Schedule{CronExpression: "0 0 2 * * *", StartTime: &start}})
	require.NoError(t, err)
	assert.Equal(t, "0 2 * * *", cj.Spec.Schedule)
	c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "trigger", c.Args[0])
	assert.Equal(t, []string{"--start", "2026-01-01T00:00:00Z"}, c.Args[3:5])
	data, err := contract.DecodeParam(c.Args[2])
	require.NoError(t, err)
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(data, &decoded))
	assert.Equal(t, p.Name, decoded["spec"].(map[string]any)["pipelineRef"].(map[string]any)["name"])
	workspace := decoded["spec"].(map[string]any)["workspaces"].([]any)[0].(map[string]any)
	assert.Equal(t, "team-a", workspace["subPath"], "every scheduled run mounts only its namespace's directory")
	assert.NotContains(t, c.Args[2], "$", "nothing for the kubelet to expand")
	assert.Equal(t, "kfp-provider", cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName)
}

func TestNames(t *testing.T) {
	long := strings.Repeat("x", 253)
	res := contract.Resource{Kind: "RunSchedule", Metadata: contract.Metadata{Name: long, Namespace: "ns", UID: "u"}}
	other := res
	other.Metadata.UID = "v"
	assert.LessOrEqual(t, len(CronJobName(res)), maxCronJobName)
	assert.NotEqual(t, CronJobName(res), CronJobName(other), "a later resource of the same name gets its own CronJob")
	assert.LessOrEqual(t, len(RunName(res)), 63)
	assert.NotEqual(t, PipelineVersionName("id", "1"), PipelineVersionName("id", "2"))
	assert.Equal(t, kfpir.ArtifactsWorkspace, "artifacts")
}

func TestPrunableRuns(t *testing.T) {
	run := func(name string, done bool) tektonv1.PipelineRun {
		pr := tektonv1.PipelineRun{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if done {
			pr.Status.SetCondition(&apis.Condition{Type: apis.ConditionSucceeded, Status: corev1.ConditionTrue})
		}
		return pr
	}
	runs := []tektonv1.PipelineRun{run("s-103", true), run("s-101", true), run("s-104", false), run("s-102", false), run("s-100", true)}
	names := func(prs []*tektonv1.PipelineRun) []string {
		var out []string
		for _, pr := range prs {
			out = append(out, pr.Name)
		}
		return out
	}
	assert.Equal(t, []string{"s-100"}, names(PrunableRuns(runs, 2)), "the oldest finished beyond 2; unfinished kept")
	assert.Empty(t, PrunableRuns(runs, 3))
	assert.Len(t, PrunableRuns(runs, 0), 5, "0: all")
}

// TestFinallyTasksAreRestrictedToo: an exit handler's task runs in
// finally, and its pod must meet Pod Security "restricted" as the others.
func TestFinallyTasksAreRestrictedToo(t *testing.T) {
	ir, err := os.ReadFile("../testfixtures/kfpexecutor/exit_handler.yaml")
	require.NoError(t, err)
	p, err := PipelineFor(ir, pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	require.Len(t, p.Spec.Finally, 1)
	for _, task := range append(p.Spec.Tasks, p.Spec.Finally...) {
		sc := task.TaskSpec.StepTemplate.SecurityContext
		require.NotNil(t, sc, task.Name)
		assert.False(t, *sc.AllowPrivilegeEscalation, task.Name)
	}
}

// TestKubernetesPodSettingsReachThePipelineRun: kfp-kubernetes' pod
// settings compiled onto the Pipeline become the run's taskRunSpecs; a
// pipeline of another namespace may not name the Provider namespace's
// Secrets.
func TestKubernetesPodSettingsReachThePipelineRun(t *testing.T) {
	ir := append(demoIR(t), []byte("\n---\nplatforms:\n  kubernetes:\n    deploymentSpec:\n      executors:\n        exec-train:\n"+
		"          nodeSelector: {labels: {pool: gpu}}\n"+
		"          secretAsEnv: [{secretName: db, keyToEnv: [{secretKey: pw, envVar: PW}]}]\n")...)
	p, err := PipelineFor(ir, pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	pr, err := PipelineRunFor(RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p})
	require.NoError(t, err)
	require.Len(t, pr.Spec.TaskRunSpecs, 1)
	assert.Equal(t, "train", pr.Spec.TaskRunSpecs[0].PipelineTaskName)
	assert.Equal(t, map[string]string{"pool": "gpu"}, pr.Spec.TaskRunSpecs[0].PodTemplate.NodeSelector)

	other := pipelineResource()
	other.Metadata.Namespace = "team-b"
	_, err = PipelineFor(ir, other, config(nil), "team-a", launcher)
	assert.ErrorContains(t, err, `kfp-kubernetes Secret of another namespace`)
}

// TestResourcesFromParametersReachThePipelineRun: the run's values (or the
// Pipeline's defaults) of the parameters giving a task's resources become
// its stepSpecs, beside its pod settings; a bad value fails the run's
// creation naming the parameter.
func TestResourcesFromParametersReachThePipelineRun(t *testing.T) {
	ir, err := os.ReadFile("../kfpir/testdata/resource_params.yaml")
	require.NoError(t, err)
	ir = append(ir, []byte("\n---\nplatforms:\n  kubernetes:\n    deploymentSpec:\n      executors:\n        exec-train:\n"+
		"          nodeSelector: {labels: {pool: gpu}}\n")...)
	p, err := PipelineFor(ir, pipelineResource(), config(nil), "team-a", launcher)
	require.NoError(t, err)
	spec := pipelinesv1beta1.RunSpec{Parameters: []pipelinesv1beta1.RuntimeParameter{{Name: "cpu", Value: "1500m"}}}
	pr, err := PipelineRunFor(RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Spec: spec})
	require.NoError(t, err)
	require.Len(t, pr.Spec.TaskRunSpecs, 1, "one spec for the task: pod settings and step resources")
	trs := pr.Spec.TaskRunSpecs[0]
	assert.Equal(t, "train", trs.PipelineTaskName)
	assert.Equal(t, map[string]string{"pool": "gpu"}, trs.PodTemplate.NodeSelector)
	require.Len(t, trs.StepSpecs, 1)
	assert.Equal(t, kfpir.MainStep, trs.StepSpecs[0].Name)
	assert.Equal(t, "1500m", trs.StepSpecs[0].ComputeResources.Limits.Cpu().String(), "the run's value")
	assert.Equal(t, "1Gi", trs.StepSpecs[0].ComputeResources.Requests.Memory().String(), "the default")
	gpus := trs.StepSpecs[0].ComputeResources.Limits["nvidia.com/gpu"]
	assert.Equal(t, "1", gpus.String())
	if fe := pr.Validate(context.Background()); fe != nil {
		t.Fatalf("Tekton's validation of the PipelineRun: %v", fe)
	}

	spec.Parameters[0].Value = "a lot"
	_, err = PipelineRunFor(RunInputs{Name: "r1", Namespace: "team-a", ResourceNamespace: "team-a", Pipeline: p, Spec: spec})
	assert.ErrorContains(t, err, `limits cpu from parameter cpu: "a lot" is not a Kubernetes quantity`)
}
