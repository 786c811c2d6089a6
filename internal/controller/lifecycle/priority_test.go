package lifecycle

import (
	"context"
	"testing"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
)

// pipelineRun is an operation run of owner (a Pipeline named so) at
// resourceVersion, with its Succeeded condition at succeeded ("" for none).
func pipelineRun(owner, resourceVersion string, succeeded corev1.ConditionStatus) *tektonv1.PipelineRun {
	pr := &tektonv1.PipelineRun{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team", Name: owner + "-run", ResourceVersion: resourceVersion,
		Labels:      map[string]string{contract.LabelOwnerKind: "pipeline"},
		Annotations: map[string]string{contract.AnnotationOwner: "team/" + owner},
	}}
	if succeeded != "" {
		pr.Status.Status = duckv1.Status{Conditions: duckv1.Conditions{{Type: apis.ConditionSucceeded, Status: succeeded}}}
	}
	return pr
}

func TestEndedNow(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after corev1.ConditionStatus
		want          bool
	}{
		{"pending to running", "", corev1.ConditionUnknown, false},
		{"running to running", corev1.ConditionUnknown, corev1.ConditionUnknown, false},
		{"running to succeeded", corev1.ConditionUnknown, corev1.ConditionTrue, true},
		{"running to failed", corev1.ConditionUnknown, corev1.ConditionFalse, true},
		{"pending straight to failed", "", corev1.ConditionFalse, true},
		{"succeeded, updated again", corev1.ConditionTrue, corev1.ConditionTrue, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := endedNow(pipelineRun("p", "1", c.before), pipelineRun("p", "2", c.after)); got != c.want {
				t.Errorf("endedNow = %v, want %v", got, c.want)
			}
		})
	}
}

// A run ending puts its owner ahead of every resource already waiting at
// the default priority (a burst of new ones); other updates queue behind.
func TestRunEventsPutEndedRunsFirst(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("run-events-test")
	defer q.ShutDown()
	r := &Reconciler[*pipelinesv1beta1.Pipeline]{Kind: testKind[*pipelinesv1beta1.Pipeline]{traits: Traits{Name: "pipeline"}}}
	h := newRunEvents(r.ownerOf)
	var rq workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	for _, owner := range []string{"new-1", "new-2"} {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: owner}})
	}
	update := func(owner string, before, after corev1.ConditionStatus) {
		h.Update(ctx, event.UpdateEvent{ObjectOld: pipelineRun(owner, "1", before), ObjectNew: pipelineRun(owner, "2", after)}, rq)
	}
	update("still-running", corev1.ConditionUnknown, corev1.ConditionUnknown)
	update("succeeded", corev1.ConditionUnknown, corev1.ConditionTrue)
	update("failed", "", corev1.ConditionFalse)

	type got struct {
		name     string
		priority int
	}
	want := []got{{"succeeded", PriorityProgress}, {"failed", PriorityProgress}, {"new-1", 0}, {"new-2", 0}, {"still-running", 0}}
	for i, w := range want {
		req, priority, _ := q.GetWithPriority()
		q.Done(req)
		if (got{req.Name, priority}) != w {
			t.Fatalf("item %d = %s at %d, want %s at %d", i, req.Name, priority, w.name, w.priority)
		}
	}
}

// A waiter the limiter wakes goes ahead of resources that have not asked
// for room yet.
func TestWakeGoesFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("wake-test")
	defer q.ShutDown()
	r := &Reconciler[*pipelinesv1beta1.Pipeline]{}
	var rq workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	r.queue.Store(&rq)
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "new"}})
	r.wake(types.NamespacedName{Namespace: "team", Name: "woken"})

	req, priority, _ := q.GetWithPriority()
	if req.Name != "woken" || priority != PriorityProgress {
		t.Fatalf("first item = %s at %d, want woken at %d", req.Name, priority, PriorityProgress)
	}
}

// Whatever priority queued a reconcile, what it queues next (a recheck, a
// retry) takes the default: a woken resource is not ahead for good.
func TestReconcileQueuesAgainAtTheDefaultPriority(t *testing.T) {
	r := &Reconciler[*pipelinesv1beta1.Pipeline]{
		Settings: Settings{Client: fake.NewClientBuilder().WithScheme(scheme.New()).Build()},
		Kind:     testKind[*pipelinesv1beta1.Pipeline]{traits: Traits{Name: "pipeline"}, new: func() *pipelinesv1beta1.Pipeline { return &pipelinesv1beta1.Pipeline{} }},
	}
	result, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if result.Priority == nil || *result.Priority != 0 {
		t.Fatalf("result priority = %v, want 0", result.Priority)
	}
}
