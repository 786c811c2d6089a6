package lifecycle_test

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

const (
	wait = 20 * time.Second
	tick = 50 * time.Millisecond
)

var ctx = context.Background()

// startOperator runs the operator as cmd/operator assembles it.
func startOperator(t *testing.T) { startOperatorWithBackoff(t, 300*time.Millisecond) }

func startOperatorWithBackoff(t *testing.T, backoff time.Duration) {
	t.Helper()
	stopOperator = cp.RunOperator(t, operator.Config{
		RetryBackoffBase:      metav1.Duration{Duration: backoff},
		RetryBackoffMax:       metav1.Duration{Duration: 2 * backoff},
		ArtifactRepositoryTTL: metav1.Duration{Duration: 100 * time.Millisecond},
		OperationTimeout:      metav1.Duration{Duration: testOperationTimeout},
	})
}

const testOperationTimeout = 7 * time.Minute

var stopOperator func()

type fixture struct {
	ns       string
	provider *pipelinesv1beta1.Provider
	reg      *registry.Registry
}

// setup starts the operator and a Ready provider "kfp" with framework tfx.
func setup(t *testing.T) *fixture {
	t.Helper()
	return setupWithBackoff(t, 300*time.Millisecond)
}

func setupWithBackoff(t *testing.T, backoff time.Duration) *fixture {
	t.Helper()
	startOperatorWithBackoff(t, backoff)
	f := &fixture{reg: registry.Start(t)}
	f.ns = newNamespace(t)
	image, _ := f.reg.Push("team/provider:v1")
	compiler, _ := f.reg.Push("team/compiler-tfx:v1")
	require.NoError(t, cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "kfp-provider"}}))
	f.provider = &pipelinesv1beta1.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{Image: image, ServiceAccount: "kfp-provider", PipelineRootStorage: "gs://root/pipelines",
			Frameworks: []pipelinesv1beta1.Framework{{Name: "tfx", Image: compiler}}},
	}
	require.NoError(t, cp.Client.Create(ctx, f.provider))
	require.Eventually(t, func() bool {
		_ = cp.Client.Get(ctx, client.ObjectKeyFromObject(f.provider), f.provider)
		return meta.IsStatusConditionTrue(f.provider.Status.Conditions, pipelinesv1beta1.ConditionReady)
	}, wait, tick)
	return f
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}
	require.NoError(t, cp.Client.Create(ctx, ns))
	return ns.Name
}

func newPipeline(ns, name string) *pipelinesv1beta1.Pipeline {
	return &pipelinesv1beta1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: pipelinesv1beta1.PipelineSpec{Provider: "kfp", Image: "example.com/penguin:0.3.1",
			Env: []pipelinesv1beta1.NamedValue{{Name: "RUNS", Value: "10"}}, Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx"}},
	}
}

// runsOf lists the resource's PipelineRuns, oldest first.
func runsOf(t *testing.T, ns string, obj client.Object) []tektonv1.PipelineRun {
	t.Helper()
	list := &tektonv1.PipelineRunList{}
	require.NoError(t, cp.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{lifecycle.LabelOwnerUID: string(obj.GetUID())}))
	items := list.Items
	sort.SliceStable(items, func(i, j int) bool {
		return items[i].Annotations[lifecycle.AnnotationCreatedAt] < items[j].Annotations[lifecycle.AnnotationCreatedAt]
	})
	return items
}

// eventuallyRun waits for the resource's n-th PipelineRun (1-based) and returns it.
func eventuallyRun(t *testing.T, ns string, obj client.Object, n int, op string) *tektonv1.PipelineRun {
	t.Helper()
	var pr *tektonv1.PipelineRun
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		runs := runsOf(t, ns, obj)
		if assert.GreaterOrEqual(c, len(runs), n) {
			pr = &runs[n-1]
			assert.Equal(c, op, pr.Labels[lifecycle.LabelOperation])
		}
	}, wait, tick)
	return pr
}

// finish patches a PipelineRun's status as Tekton does when it ends.
func finish(t *testing.T, pr *tektonv1.PipelineRun, succeeded bool, id, providerError, message string) {
	t.Helper()
	now := metav1.Now()
	status := corev1.ConditionTrue
	reason := "Succeeded"
	if !succeeded {
		status, reason = corev1.ConditionFalse, "Failed"
	}
	pr.Status.Conditions = duckv1.Conditions{{Type: apis.ConditionSucceeded, Status: status, Reason: reason, Message: message,
		LastTransitionTime: apis.VolatileTime{Inner: now}}}
	pr.Status.StartTime, pr.Status.CompletionTime = &now, &now
	if succeeded {
		pr.Status.Results = []tektonv1.PipelineRunResult{
			{Name: taskdef.ResultProviderID, Value: *tektonv1.NewStructuredValues(id)},
			{Name: taskdef.ResultProviderError, Value: *tektonv1.NewStructuredValues(providerError)},
		}
	}
	require.NoError(t, cp.Client.Status().Update(ctx, pr))
}

func condition(obj lifecycle.Subject, typ string) *metav1.Condition {
	return meta.FindStatusCondition(obj.CommonStatus().Conditions, typ)
}

// eventually waits until get(obj) satisfies check.
func eventually(t *testing.T, obj lifecycle.Subject, check func(c *assert.CollectT)) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		require.NoError(c, cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		check(c)
	}, wait, tick)
}

// update changes obj as the latest version from the API server, retrying
// conflicts with the controllers' own writes.
func update[T client.Object](t *testing.T, obj T, change func(T)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return cp.Client.Update(ctx, obj)
	}))
}

// readyMessageContains checks the Ready condition's message (after get).
func readyMessageContains(obj lifecycle.Subject, parts ...string) func(*assert.CollectT) {
	return func(c *assert.CollectT) {
		cond := condition(obj, pipelinesv1beta1.ConditionReady)
		if assert.NotNil(c, cond) {
			for _, part := range parts {
				assert.Contains(c, cond.Message, part)
			}
		}
	}
}

func readyIs(status metav1.ConditionStatus, reason string) func(obj lifecycle.Subject) func(*assert.CollectT) {
	return func(obj lifecycle.Subject) func(*assert.CollectT) {
		return func(c *assert.CollectT) {
			cond := condition(obj, pipelinesv1beta1.ConditionReady)
			if assert.NotNil(c, cond) {
				assert.Equal(c, status, cond.Status, cond.Message)
				assert.Equal(c, reason, cond.Reason, cond.Message)
				assert.Equal(c, obj.GetGeneration(), cond.ObservedGeneration)
			}
		}
	}
}

// params are a run's params as the steps receive them: JSON params decoded
// from the encoding that keeps them safe from substitution.
func params(pr *tektonv1.PipelineRun) map[string]string {
	out := map[string]string{}
	for _, p := range pr.Spec.Params {
		v := p.Value.StringVal
		if strings.HasPrefix(v, contract.EncodedPrefix) {
			data, err := contract.DecodeParam(v)
			if err != nil {
				panic(err)
			}
			v = string(data)
		}
		out[p.Name] = v
	}
	return out
}

func TestPipelineLifecycle(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "penguin")
	require.NoError(t, cp.Client.Create(ctx, p))

	pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
	eventually(t, p, func(c *assert.CollectT) {
		sync := condition(p, pipelinesv1beta1.ConditionSynchronized)
		if assert.NotNil(c, sync) {
			assert.Equal(c, string(pipelinesv1beta1.StateCreating), sync.Reason)
		}
		readyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(p)(c)
	})

	// The run: deterministic name, provider SA, labels, Tekton-valid, inputs as the contract says.
	assert.Equal(t, "kfp-provider", pr.Spec.TaskRunTemplate.ServiceAccountName)
	if assert.NotNil(t, pr.Spec.Timeouts, "every operation has a timeout") {
		assert.Equal(t, testOperationTimeout, pr.Spec.Timeouts.Pipeline.Duration)
	}
	assert.Equal(t, "pipeline", pr.Labels[lifecycle.LabelOwnerKind])
	assert.Equal(t, f.ns, pr.Labels[lifecycle.LabelOwnerNamespace])
	assert.Equal(t, "kfp", pr.Labels[lifecycle.LabelProvider])
	assert.Equal(t, naming.LabelValue("pipeline", f.ns, "penguin"), pr.Labels[lifecycle.LabelTektonPipeline])
	assert.True(t, strings.HasPrefix(pr.Name, "pipeline-penguin-create-"), pr.Name)
	assert.Equal(t, "kfp-pipeline-create", pr.Spec.PipelineSpec.Tasks[0].TaskRef.Name)
	require.NoError(t, generator.Validate(ctx, pr))
	in := params(pr)
	for _, p := range pr.Spec.Params {
		if p.Name == taskdef.ParamResource || p.Name == taskdef.ParamProviderConfig || p.Name == taskdef.ParamPipelineConfig {
			assert.True(t, strings.HasPrefix(p.Value.StringVal, contract.EncodedPrefix), "%s is encoded: no $ for Tekton or the kubelet to substitute", p.Name)
		}
	}
	assert.Equal(t, f.provider.Status.Image, in[taskdef.ParamProviderImage])
	assert.Equal(t, f.provider.Status.Frameworks[0].Image, in[taskdef.ParamCompilerImage])
	assert.Equal(t, "example.com/penguin:0.3.1", in[taskdef.ParamPipelineImage])
	var compile map[string]any
	require.NoError(t, json.Unmarshal([]byte(in[taskdef.ParamPipelineConfig]), &compile))
	assert.Equal(t, "gs://root/pipelines", compile["pipelineRoot"], "the Provider's pipelineRootStorage is the last resort")
	var resource map[string]any
	require.NoError(t, json.Unmarshal([]byte(in[taskdef.ParamResource]), &resource))
	assert.Equal(t, "Pipeline", resource["kind"])

	finish(t, pr, true, "pipeline-42", "", "")
	eventually(t, p, func(c *assert.CollectT) {
		readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p)(c)
		assert.Equal(c, "pipeline-42", p.Status.Provider.ID)
		assert.Equal(c, f.ns+"/kfp", p.Status.Provider.Name)
		assert.True(c, strings.HasPrefix(p.Status.Version, "0.3.1-"), p.Status.Version)
	})
	firstVersion := p.Status.Version

	// A reconcile with nothing new creates nothing.
	p.Annotations = map[string]string{"poke": "1"}
	require.NoError(t, cp.Client.Update(ctx, p))
	require.Never(t, func() bool { return len(runsOf(t, f.ns, p)) > 1 }, time.Second, tick, "no-op reconciles create nothing")

	// Update: a new version, an update operation.
	p.Spec.Env[0].Value = "20"
	require.NoError(t, cp.Client.Update(ctx, p))
	update := eventuallyRun(t, f.ns, p, 2, lifecycle.OpUpdate)
	finish(t, update, true, "pipeline-42", "", "")
	eventually(t, p, func(c *assert.CollectT) {
		readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p)(c)
		assert.NotEqual(c, firstVersion, p.Status.Version)
	})

	// Delete: the backend delete runs before the finalizer goes.
	require.NoError(t, cp.Client.Delete(ctx, p))
	del := eventuallyRun(t, f.ns, p, 3, lifecycle.OpDelete)
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p), "held by the finalizer")
	finish(t, del, true, "pipeline-42", "", "")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Pipeline{}))
	}, wait, tick)
}

func TestFailuresAreReportedAndRetriedWithBackoff(t *testing.T) {
	// Tekton's timestamps have whole seconds: a backoff of seconds is observable.
	f := setupWithBackoff(t, 2*time.Second)
	p := newPipeline(f.ns, "flaky")
	require.NoError(t, cp.Client.Create(ctx, p))

	first := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
	finish(t, first, true, "", "quota exceeded in project ml", "")
	eventually(t, p, func(c *assert.CollectT) {
		readyIs(metav1.ConditionFalse, pipelinesv1beta1.ReasonPipelineRunFailed)(p)(c)
		if cond := condition(p, pipelinesv1beta1.ConditionReady); cond != nil {
			assert.Contains(c, cond.Message, "provider error")
			assert.Contains(c, cond.Message, "quota exceeded in project ml")
			assert.Contains(c, cond.Message, "attempt 1; retrying in")
		}
		assert.Equal(c, string(pipelinesv1beta1.StateFailed), condition(p, pipelinesv1beta1.ConditionSynchronized).Reason)
	})

	second := eventuallyRun(t, f.ns, p, 2, lifecycle.OpCreate)
	assert.Equal(t, "1", second.Labels[lifecycle.LabelAttempt], "the retry is a new attempt")
	assert.GreaterOrEqual(t, second.CreationTimestamp.Sub(first.Status.CompletionTime.Time), time.Second, "after the backoff")
	eventually(t, p, readyMessageContains(p, "attempt 2; the previous one: provider error"))
	finish(t, second, false, "", "", "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0")
	eventually(t, p, readyMessageContains(p, "Failed: 1", "attempt 2"))

	third := eventuallyRun(t, f.ns, p, 3, lifecycle.OpCreate)
	finish(t, third, true, "pipeline-7", "", "")
	eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

// A controller that crashed between creating the run and writing status
// finds the run it made: still exactly one.
func TestRestartCreatesNoSecondRun(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "restart")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
	stopOperator()

	// As if the status write had never happened.
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p))
	p.Status = pipelinesv1beta1.Status{}
	require.NoError(t, cp.Client.Status().Update(ctx, p))

	startOperator(t)
	eventually(t, p, readyIs(metav1.ConditionUnknown, pipelinesv1beta1.ReasonProgressing)(p))
	assert.Len(t, runsOf(t, f.ns, p), 1)
	finish(t, pr, true, "pipeline-1", "", "")
	eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	assert.Len(t, runsOf(t, f.ns, p), 1)
}

func TestPipelineRunDeletedMidFlightIsRecreated(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "interrupted")
	require.NoError(t, cp.Client.Create(ctx, p))
	pr := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)
	require.NoError(t, cp.Client.Delete(ctx, pr))
	var again *tektonv1.PipelineRun
	require.Eventually(t, func() bool {
		runs := runsOf(t, f.ns, p)
		if len(runs) == 1 && runs[0].UID != pr.UID {
			again = &runs[0]
			return true
		}
		return false
	}, wait, tick)
	assert.Equal(t, pr.Name, again.Name, "the same operation, the same name")
	finish(t, again, true, "pipeline-9", "", "")
	eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
}

func TestSpecChangedWhileRunningWaitsThenSyncsTheNewest(t *testing.T) {
	f := setup(t)
	p := newPipeline(f.ns, "busy")
	require.NoError(t, cp.Client.Create(ctx, p))
	create := eventuallyRun(t, f.ns, p, 1, lifecycle.OpCreate)

	for _, v := range []string{"11", "12"} {
		update(t, p, func(p *pipelinesv1beta1.Pipeline) { p.Spec.Env[0].Value = v })
	}
	require.Never(t, func() bool { return len(runsOf(t, f.ns, p)) > 1 }, time.Second, tick, "nothing starts while an operation runs")

	finish(t, create, true, "pipeline-3", "", "")
	update := eventuallyRun(t, f.ns, p, 2, lifecycle.OpUpdate)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal([]byte(params(update)[taskdef.ParamPipelineConfig]), &cfg))
	assert.Equal(t, "12", cfg["env"].([]any)[0].(map[string]any)["value"], "the newest spec")
	finish(t, update, true, "pipeline-3", "", "")
	eventually(t, p, readyIs(metav1.ConditionTrue, pipelinesv1beta1.ReasonSynchronized)(p))
	assert.Len(t, runsOf(t, f.ns, p), 2)
}
