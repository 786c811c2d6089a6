package provider

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

// observed is a live CLI Provider's observation with nothing wrong; each
// change edits it.
func observed(changes ...func(*observation)) observation {
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "kfp", Generation: 3,
		Finalizers: []string{pipelinesv1beta1.FinalizerSharedTasks}}}
	p.Spec.Image = "registry.example/kfp:1"
	o := observation{provider: p, workflowNamespace: "team", hasFinalizer: true, tasks: []string{"a", "b"},
		image: "registry.example/kfp@sha256:1", retryAfter: time.Minute}
	for _, change := range changes {
		change(&o)
	}
	return o
}

func asService(o *observation) {
	o.provider.Spec.ServiceImage, o.serviceImage, o.image = "registry.example/svc:1", "registry.example/svc@sha256:2", "helper@sha256:3"
}

func deleting(o *observation) {
	now := metav1.Now()
	o.provider.DeletionTimestamp = &now
}

func TestDecide(t *testing.T) {
	notAllowed := fmt.Errorf("%w: team-b/runner", errServiceAccountNotAllowed)
	for name, tc := range map[string]struct {
		o    observation
		want plan
	}{
		"a CLI Provider: Tasks applied, no service": {o: observed(), want: plan{tasks: put, service: drop, report: true}},
		"its finalizer first": {o: observed(func(o *observation) { o.hasFinalizer = false }),
			want: plan{finalizer: put, tasks: put, service: drop, report: true}},
		"a service Provider: its service applied": {o: observed(asService), want: plan{tasks: put, service: put, report: true}},
		"a service whose image does not resolve is left as it is": {
			o:    observed(asService, func(o *observation) { o.imageErr = errors.New("unreachable") }),
			want: plan{tasks: put, report: true}},
		"a service whose account is missing is left as it is": {
			o:    observed(asService, func(o *observation) { o.serviceAccountErr = errServiceAccountNotFound }),
			want: plan{tasks: put, report: true}},
		"a service whose pod settings are refused is left as it is": {
			o:    observed(asService, func(o *observation) { o.podTemplateErr = errors.New("hostNetwork") }),
			want: plan{tasks: put, report: true}},
		"a service no longer allowed its account goes": {
			o:    observed(asService, func(o *observation) { o.serviceAccountErr = notAllowed }),
			want: plan{tasks: put, service: drop, report: true}},
		"deleted without the finalizer: nothing": {o: observed(deleting, func(o *observation) { o.hasFinalizer = false })},
		"deleted while in use: the status says by whom": {
			o:    observed(deleting, func(o *observation) { o.users = []usage{{kind: userKinds[0], count: 1}} }),
			want: plan{inUse: true}},
		"deleted in a terminating namespace: let go": {
			o:    observed(deleting, func(o *observation) { o.namespaceTerminating = true }),
			want: plan{finalizer: drop}},
		"deleted, others use the namespace: its service goes, the Tasks stay": {
			o:    observed(deleting, func(o *observation) { o.otherProviders = 2 }),
			want: plan{service: drop, finalizer: drop}},
		"the last one deleted: its service and the Tasks go": {o: observed(deleting),
			want: plan{tasks: drop, service: drop, finalizer: drop}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, decide(tc.o))
		})
	}
}

func TestConclude(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "tasks"}, "a", errors.New("changed"))
	missing := fmt.Errorf("applying Task team/a: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "team"))
	for name, tc := range map[string]struct {
		o      observation
		a      applied
		ready  metav1.ConditionStatus
		reason string
		ends   outcome.Outcome
	}{
		"ready":                   {o: observed(), ready: metav1.ConditionTrue, reason: pipelinesv1beta1.ReasonTasksApplied, ends: outcome.DoneOutcome()},
		"Tasks refused: retried":  {o: observed(), a: applied{tasksErr: conflict}, reason: pipelinesv1beta1.ReasonTasksNotApplied, ends: outcome.Retry(conflict)},
		"no namespace yet: waits": {o: observed(), a: applied{tasksErr: missing}, reason: pipelinesv1beta1.ReasonTasksNotApplied, ends: outcome.WaitFor(time.Minute)},
		"no service account: waits": {o: observed(func(o *observation) {
			o.serviceAccountErr, o.imageErr = errServiceAccountNotFound, errServiceAccountNotFound
		}), reason: pipelinesv1beta1.ReasonServiceAccountNotFound, ends: outcome.WaitFor(time.Minute)},
		"an unreachable image waits": {o: observed(func(o *observation) { o.imageErr = errors.New("unreachable") }), reason: pipelinesv1beta1.ReasonImageNotResolvable, ends: outcome.WaitFor(time.Minute)},
		"an invalid image stalls": {o: observed(func(o *observation) { o.imageErr = fmt.Errorf("spec.image: %w", imageref.ErrInvalidReference) }),
			reason: pipelinesv1beta1.ReasonInvalidSpec, ends: outcome.Stall()},
		"refused pod settings stall": {o: observed(asService, func(o *observation) { o.podTemplateErr = errors.New("hostNetwork") }),
			reason: pipelinesv1beta1.ReasonInvalidSpec, ends: outcome.Stall()},
		"refused pod settings of a marked account wait for the mark": {
			o:      observed(asService, func(o *observation) { o.podTemplateErr, o.sharedAccount = errors.New("hostNetwork"), true }),
			reason: pipelinesv1beta1.ReasonInvalidSpec, ends: outcome.WaitFor(time.Minute)},
		"Pod Security would refuse the pods: waits": {o: observed(func(o *observation) { o.podSecurity = "restricted" }),
			reason: pipelinesv1beta1.ReasonPodSecurityIncompatible, ends: outcome.WaitFor(time.Minute)},
		"a service not ready yet waits": {o: observed(asService), a: applied{serviceURL: "http://10.0.0.1:8080", serviceNotReady: "pulling"},
			reason: pipelinesv1beta1.ReasonProviderServiceNotReady, ends: outcome.WaitFor(time.Minute)},
		"a service not applied waits": {o: observed(asService), a: applied{serviceErr: errors.New("forbidden")},
			reason: pipelinesv1beta1.ReasonProviderServiceNotReady, ends: outcome.WaitFor(time.Minute)},
		"a ready service": {o: observed(asService), a: applied{serviceURL: "http://10.0.0.1:8080"},
			ready: metav1.ConditionTrue, reason: pipelinesv1beta1.ReasonTasksApplied, ends: outcome.DoneOutcome()},
		"a ready Provider of a marked account is checked again": {o: observed(func(o *observation) { o.sharedAccount = true }),
			ready: metav1.ConditionTrue, reason: pipelinesv1beta1.ReasonTasksApplied, ends: outcome.WaitFor(time.Minute)},
	} {
		t.Run(name, func(t *testing.T) {
			s, ends := conclude(tc.o, tc.a)
			ready := meta.FindStatusCondition(s.Conditions, pipelinesv1beta1.ConditionReady)
			if assert.NotNil(t, ready) {
				want := tc.ready
				if want == "" {
					want = metav1.ConditionFalse
				}
				assert.Equal(t, want, ready.Status)
				assert.Equal(t, tc.reason, ready.Reason)
			}
			assert.Equal(t, tc.ends, ends)
			assert.Equal(t, tc.o.workflowNamespace, s.WorkflowNamespace)
			if tc.a.tasksErr == nil {
				assert.Equal(t, tc.o.tasks, s.Tasks)
			}
			if tc.o.imageErr != nil {
				assert.Empty(t, s.Image, "no stale pin")
			}
			assert.Equal(t, tc.a.serviceURL, s.ServiceURL)
		})
	}
}
