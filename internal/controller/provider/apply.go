package provider

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
)

// apply carries out pl for p as observed, in the plan's order, and says how
// the reconcile ends: a failed write is retried, the rest as conclude says.
func (r *Reconciler) apply(ctx context.Context, p *pipelinesv1beta1.Provider, o observation, pl plan) outcome.Outcome {
	if pl.finalizer == put {
		if err := status.AddFinalizer(ctx, r.Client, p, pipelinesv1beta1.FinalizerSharedTasks); err != nil {
			return outcome.Retry(err)
		}
	}
	if pl.inUse {
		return outcome.DoneOr(r.writeStatus(ctx, p, inUseStatus(p, o.users)))
	}
	a, err := r.applySteps(ctx, p, o, pl)
	if err != nil {
		return outcome.Retry(err)
	}
	if pl.finalizer == drop {
		return outcome.DoneOr(status.RemoveFinalizer(ctx, r.Client, p, pipelinesv1beta1.FinalizerSharedTasks))
	}
	if !pl.report {
		return outcome.DoneOutcome()
	}
	desired, end := conclude(o, a)
	if err := r.writeStatus(ctx, p, desired); err != nil {
		return outcome.Retry(err)
	}
	return end
}

// applySteps applies or removes the shared Tasks and the provider service
// as pl says. A failure to apply them is part of what it reports (the
// status shows it); a failure to remove them is returned.
func (r *Reconciler) applySteps(ctx context.Context, p *pipelinesv1beta1.Provider, o observation, pl plan) (applied, error) {
	var a applied
	namespace := o.workflowNamespace
	if pl.tasks == put {
		_, a.tasksErr = r.tasks.ensure(ctx, namespace)
	}
	switch {
	case pl.service == drop:
		if err := r.removeService(ctx, p, namespace); err != nil {
			return a, err
		}
	case pl.service == put && a.tasksErr == nil:
		a.serviceURL, a.serviceNotReady, a.serviceErr = r.ensureService(ctx, p, namespace, o.serviceImage)
	}
	if pl.tasks == drop {
		if err := r.tasks.remove(ctx, namespace); err != nil {
			return a, err
		}
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "TasksRemoved", "Finalize",
			"last Provider using namespace %s: shared Tasks removed", namespace)
	}
	return a, nil
}

// writeStatus patches the status when it changed, and records an Event when
// readiness changed.
func (r *Reconciler) writeStatus(ctx context.Context, p *pipelinesv1beta1.Provider, desired pipelinesv1beta1.ProviderStatus) error {
	base := p.DeepCopy()
	p.Status = desired
	w := status.Writer{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(*pipelinesv1beta1.Provider).Status.Conditions
	}}
	return w.Patch(ctx, base, p)
}
