package provider_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	tektonmeta "github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

const (
	wait = 20 * time.Second
	tick = 50 * time.Millisecond
)

// startOperator runs the operator's manager, as cmd/operator assembles it,
// until the test ends.
func startOperator(t *testing.T, workflowNamespace string) {
	t.Helper()
	cp.RunOperator(t, func(c *operator.Config) { c.WorkflowNamespace = workflowNamespace })
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}
	require.NoError(t, cp.Client.Create(context.Background(), ns))
	return ns.Name
}

func serviceAccount(t *testing.T, ns, name string) {
	t.Helper()
	require.NoError(t, cp.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
}

// markedServiceAccount creates an account of the shared workflow namespace
// marked for the Providers listed (contract.AnnotationProviders).
func markedServiceAccount(t *testing.T, ns, name, providers string) {
	t.Helper()
	require.NoError(t, cp.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, Annotations: map[string]string{contract.AnnotationProviders: providers}}}))
}

// withPipelineServiceAccount sets the Tekton provider's parameter naming
// the account its pipeline steps run as.
func withPipelineServiceAccount(p *pipelinesv1beta1.Provider, name string) *pipelinesv1beta1.Provider {
	if p.Spec.Parameters == nil {
		p.Spec.Parameters = map[string]apiextensionsv1.JSON{}
	}
	p.Spec.Parameters[tektonmeta.ParamPipelineServiceAccount] = apiextensionsv1.JSON{Raw: []byte(strconv.Quote(name))}
	return p
}

func newProvider(ns, name, image string, frameworks ...pipelinesv1beta1.Framework) *pipelinesv1beta1.Provider {
	return &pipelinesv1beta1.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       pipelinesv1beta1.ProviderSpec{Image: image, ServiceAccount: "kfp-provider", Frameworks: frameworks},
	}
}

func sharedTasks(t *testing.T, ns string) []tektonv1.Task {
	t.Helper()
	list := &tektonv1.TaskList{}
	require.NoError(t, cp.Client.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabels{contract.LabelManagedBy: contract.ManagedByOperator}))
	return list.Items
}

func ready(t *testing.T, p *pipelinesv1beta1.Provider) *metav1.Condition {
	t.Helper()
	got := &pipelinesv1beta1.Provider{}
	if err := cp.Client.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
		return nil
	}
	*p = *got
	c := meta.FindStatusCondition(got.Status.Conditions, pipelinesv1beta1.ConditionReady)
	if c == nil || c.ObservedGeneration != got.Generation {
		return nil
	}
	return c
}

func eventuallyReady(t *testing.T, p *pipelinesv1beta1.Provider, status metav1.ConditionStatus, reason string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cond := ready(t, p)
		if assert.NotNil(c, cond) {
			assert.Equal(c, status, cond.Status, cond.Message)
			assert.Equal(c, reason, cond.Reason, cond.Message)
		}
	}, wait, tick)
}

func TestSharedTasksOnePerNamespaceUntilTheLastProviderGoes(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, imageDigest := reg.Push("team/provider:v1")
	compiler, compilerDigest := reg.Push("team/compiler-tfx:v1")
	want, err := tasks.Names()
	require.NoError(t, err)

	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	first := newProvider(ns, "kfp", image, pipelinesv1beta1.Framework{Name: "tfx", Image: compiler})
	require.NoError(t, cp.Client.Create(ctx, first))
	eventuallyReady(t, first, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)

	assert.Equal(t, image+"@"+imageDigest, first.Status.Image, "the image is pinned to the digest the registry serves")
	assert.Equal(t, []pipelinesv1beta1.Framework{{Name: "tfx", Image: compiler + "@" + compilerDigest}}, first.Status.Frameworks)
	assert.Equal(t, ns, first.Status.WorkflowNamespace)
	assert.ElementsMatch(t, want, first.Status.Tasks)
	synced := meta.FindStatusCondition(first.Status.Conditions, pipelinesv1beta1.ConditionSynchronized)
	require.NotNil(t, synced)
	assert.Equal(t, string(pipelinesv1beta1.StateSucceeded), synced.Reason)
	assert.Len(t, sharedTasks(t, ns), len(want))
	for _, task := range sharedTasks(t, ns) {
		assert.Equal(t, "test", task.Annotations["pipelines.kubeflow.org/operator-version"])
	}
	compilerSA := &corev1.ServiceAccount{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: taskdef.CompilerServiceAccount}, compilerSA),
		"the compiler account is made beside the Tasks")
	require.NotNil(t, compilerSA.AutomountServiceAccountToken)
	assert.False(t, *compilerSA.AutomountServiceAccountToken, "compile pods never get a token")
	update(t, compilerSA, func(sa *corev1.ServiceAccount) { sa.AutomountServiceAccountToken = ptr.To(true) })

	second := newProvider(ns, "vai", image)
	require.NoError(t, cp.Client.Create(ctx, second))
	eventuallyReady(t, second, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	assert.Len(t, sharedTasks(t, ns), len(want), "a second Provider shares the namespace's one copy")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: taskdef.CompilerServiceAccount}, compilerSA))
	assert.False(t, *compilerSA.AutomountServiceAccountToken, "an edited compiler account is restored on the next reconcile")

	require.NoError(t, cp.Client.Delete(ctx, first))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(first), &pipelinesv1beta1.Provider{}))
	}, wait, tick)
	assert.Len(t, sharedTasks(t, ns), len(want), "Tasks stay while a Provider uses them")

	require.NoError(t, cp.Client.Delete(ctx, second))
	require.Eventually(t, func() bool { return len(sharedTasks(t, ns)) == 0 }, wait, tick, "the last Provider takes the Tasks with it")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: taskdef.CompilerServiceAccount}, &corev1.ServiceAccount{}))
	}, wait, tick, "and the compiler account")
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(second), &pipelinesv1beta1.Provider{}))
	}, wait, tick)

	events := &eventsv1.EventList{}
	require.NoError(t, cp.Client.List(ctx, events, client.InNamespace(ns)))
	reasons := map[string]bool{}
	for _, e := range events.Items {
		reasons[e.Reason] = true
	}
	assert.True(t, reasons[pipelinesv1beta1.ReasonTasksApplied] && reasons["TasksRemoved"], "events on transitions: %v", reasons)
}

func TestEditedOrDeletedTasksAreRestored(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	p := newProvider(ns, "kfp", image)
	require.NoError(t, cp.Client.Create(ctx, p))
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)

	task := &tektonv1.Task{}
	key := client.ObjectKey{Namespace: ns, Name: "kfp-run-create"}
	require.NoError(t, cp.Client.Get(ctx, key, task))
	original := task.Spec.DeepCopy()
	task.Spec.Steps[0].Image = "evil.example.com/helper"
	task.Spec.Description = "edited by hand"
	require.NoError(t, cp.Client.Update(ctx, task))
	require.Eventually(t, func() bool {
		got := &tektonv1.Task{}
		return cp.Client.Get(ctx, key, got) == nil && got.Spec.Steps[0].Image == original.Steps[0].Image &&
			got.Spec.Description == original.Description
	}, wait, tick, "an edited Task is restored")

	require.NoError(t, cp.Client.Delete(ctx, task))
	require.Eventually(t, func() bool {
		got := &tektonv1.Task{}
		return cp.Client.Get(ctx, key, got) == nil && got.DeletionTimestamp.IsZero()
	}, wait, tick, "a deleted Task is recreated")
}

func TestWorkflowNamespaceHoldsEveryProvidersTasks(t *testing.T) {
	ctx := context.Background()
	workflows := namespace(t)
	startOperator(t, workflows)
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	serviceAccount(t, workflows, "kfp-provider")

	ns := namespace(t)
	markedServiceAccount(t, workflows, "kfp-pipeline-runner", ns+"/kfp")
	p := withPipelineServiceAccount(newProvider(ns, "kfp", image), "kfp-pipeline-runner")
	require.NoError(t, cp.Client.Create(ctx, p))
	// The shared namespace's service account must be marked for this Provider.
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotAllowed)
	assert.Contains(t, ready(t, p).Message, fmt.Sprintf(`pipelines.kubeflow.org/providers: "%s/kfp"`, ns))
	sa := &corev1.ServiceAccount{}
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: workflows, Name: "kfp-provider"}, sa))
	sa.Annotations = map[string]string{contract.AnnotationProviders: "other/kfp, " + ns + "/kfp"}
	require.NoError(t, cp.Client.Update(ctx, sa))
	// The operator does not watch service accounts.
	update(t, p, func(p *pipelinesv1beta1.Provider) { p.Annotations = map[string]string{"poke": "1"} })
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	assert.Equal(t, workflows, p.Status.WorkflowNamespace)
	assert.NotEmpty(t, sharedTasks(t, workflows))
	assert.Empty(t, sharedTasks(t, ns), "nothing in the Provider's own namespace")

	// The platform engineer takes the mark away: the Provider is refused
	// again without anything touching it (re-checked every RetryAfter).
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(sa), sa))
	sa.Annotations = map[string]string{contract.AnnotationProviders: "other/kfp"}
	require.NoError(t, cp.Client.Update(ctx, sa))
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotAllowed)
}

// With a shared workflow namespace, the account a Provider's pipeline
// steps run as (the Tekton provider's parameter pipelineServiceAccount, by
// default "default") must be marked for it like its own: the steps run
// tenants' images, which must not run as another team's account.
func TestWorkflowNamespacePipelineStepsAccountMustBeMarked(t *testing.T) {
	ctx := context.Background()
	workflows := namespace(t)
	startOperator(t, workflows)
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	ns := namespace(t)
	markedServiceAccount(t, workflows, "kfp-provider", ns+"/kfp")
	markedServiceAccount(t, workflows, "team-b-runner", "team-b/kfp")
	// A real cluster's namespace has its "default" account; envtest's has none.
	serviceAccount(t, workflows, "default")

	p := withPipelineServiceAccount(newProvider(ns, "kfp", image), "team-b-runner")
	require.NoError(t, cp.Client.Create(ctx, p))
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotAllowed)
	msg := ready(t, p).Message
	assert.Contains(t, msg, "service account "+workflows+"/team-b-runner (the account the Provider's parameter pipelineServiceAccount names for its pipeline steps)")
	assert.Contains(t, msg, fmt.Sprintf(`the platform engineer adds it (pipelines.kubeflow.org/providers: "%s/kfp")`, ns))
	assert.NotContains(t, msg, "team-b/kfp", "the Providers already marked are not revealed")

	// Its own account for the steps, marked for it.
	markedServiceAccount(t, workflows, "kfp-pipeline-runner", ns+"/kfp")
	update(t, p, func(p *pipelinesv1beta1.Provider) { withPipelineServiceAccount(p, "kfp-pipeline-runner") })
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)

	// Without the parameter the steps would run as "default", marked for no one.
	update(t, p, func(p *pipelinesv1beta1.Provider) { delete(p.Spec.Parameters, tektonmeta.ParamPipelineServiceAccount) })
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotAllowed)
	assert.Contains(t, ready(t, p).Message, "service account "+workflows+"/default (the account the Provider's pipeline steps run as while its parameter pipelineServiceAccount is not set)")

	// A mark taken away later stops the Provider without anything touching it.
	update(t, p, func(p *pipelinesv1beta1.Provider) { withPipelineServiceAccount(p, "kfp-pipeline-runner") })
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	runner := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: workflows, Name: "kfp-pipeline-runner"}}
	update(t, runner, func(sa *corev1.ServiceAccount) { sa.Annotations[contract.AnnotationProviders] = "team-b/kfp" })
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotAllowed)
	assert.Contains(t, ready(t, p).Message, workflows+"/kfp-pipeline-runner")
}

func TestProblemsAreReportedWithAReason(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")

	t.Run("missing service account", func(t *testing.T) {
		ns := namespace(t)
		p := newProvider(ns, "kfp", image)
		require.NoError(t, cp.Client.Create(ctx, p))
		eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonServiceAccountNotFound)
		cond := ready(t, p)
		assert.Contains(t, cond.Message, `service account "kfp-provider" does not exist in namespace `+ns)
		assert.NotEmpty(t, sharedTasks(t, ns), "Tasks are applied regardless")

		serviceAccount(t, ns, "kfp-provider")
		eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	})

	t.Run("unknown image", func(t *testing.T) {
		ns := namespace(t)
		serviceAccount(t, ns, "kfp-provider")
		p := newProvider(ns, "kfp", reg.Host+"/team/provider:v404")
		require.NoError(t, cp.Client.Create(ctx, p))
		eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonImageNotResolvable)
		cond := ready(t, p)
		assert.Contains(t, cond.Message, "v404 not found in "+reg.Host+"/team/provider")
		assert.Empty(t, p.Status.Image, "no stale pin")

		// Fixing the spec recovers.
		update(t, p, func(p *pipelinesv1beta1.Provider) { p.Spec.Image = image })
		eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	})

	t.Run("image that is no reference", func(t *testing.T) {
		ns := namespace(t)
		serviceAccount(t, ns, "kfp-provider")
		p := newProvider(ns, "kfp", "UPPER/case::image")
		require.NoError(t, cp.Client.Create(ctx, p))
		eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)
	})

	t.Run("invalid spec refused by the API server", func(t *testing.T) {
		p := newProvider("default", "bad", "")
		err := cp.Client.Create(ctx, p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "set image (a CLI provider image, run by the shared Tasks) or serviceImage")
	})
}

func TestAProviderInUseWaitsForItsUsers(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	p := newProvider(ns, "kfp", image)
	require.NoError(t, cp.Client.Create(ctx, p))
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	assert.Empty(t, p.Status.Users)

	// The engine creates its PipelineRun, which nothing runs here: the
	// annotation lets the Pipeline go at once when deleted.
	pl := &pipelinesv1beta1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "penguin",
		Annotations: map[string]string{"pipelines.kubeflow.org/skip-backend-deletion": "true"}},
		Spec: pipelinesv1beta1.PipelineSpec{Provider: "kfp", Image: "example.com/penguin:0.3.1",
			Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx"}}}
	require.NoError(t, cp.Client.Create(ctx, pl))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got := &pipelinesv1beta1.Provider{}
		require.NoError(c, cp.Client.Get(ctx, client.ObjectKeyFromObject(p), got))
		assert.Equal(c, []pipelinesv1beta1.ProviderUsers{{Kind: "Pipeline", Count: 1}}, got.Status.Users)
	}, wait, tick, "status.users counts the Pipeline")

	require.NoError(t, cp.Client.Delete(ctx, p))
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderInUse)
	cond := ready(t, p)
	assert.Contains(t, cond.Message, "still used by 1 Pipeline ("+ns+"/penguin)")
	assert.Contains(t, cond.Message, "pipelines.kubeflow.org/skip-backend-deletion=true")
	assert.Equal(t, []pipelinesv1beta1.ProviderUsers{{Kind: "Pipeline", Count: 1}}, p.Status.Users)
	assert.NotEmpty(t, sharedTasks(t, ns), "the Tasks stay while the Provider is in use")
	require.Never(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Provider{}))
	}, time.Second, tick, "the Provider waits for its users")

	require.NoError(t, cp.Client.Delete(ctx, pl))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), &pipelinesv1beta1.Provider{}))
	}, wait, tick, "the Provider goes with its last user")
	assert.Empty(t, sharedTasks(t, ns), "the last Provider of the namespace takes the Tasks with it")
}
