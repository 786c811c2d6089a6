package lifecycle

import (
	"context"
	"errors"
	"fmt"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// apply makes the change d asks for and writes the status it describes.
func (r *Reconciler[T]) apply(ctx context.Context, obj T, o Observation, d Decision) outcome.Outcome {
	base := obj.DeepCopyObject().(T)
	s := obj.CommonStatus()
	if d.Record != nil {
		// Before the run is built: the provider acts on the recorded id, never
		// on one only the status names.
		s.Provider, s.Version = d.Record.Provider, d.Record.Version
		if d.Record.PipelineVersion != "" {
			r.Kind.Record(obj, Outputs{PipelineVersion: d.Record.PipelineVersion})
		}
	}
	// Runs are pruned only in a reconcile that starts none, on a complete
	// view: what it deletes is then never what the new run is judged by.
	pruning := d.Action.Kind != StartRun && !o.AwaitingCache
	switch d.Action.Kind {
	case StartRun:
		if err := r.startRun(ctx, obj, o, d.Action); err != nil {
			if !mayHaveCreated(err) {
				r.giveBack(ctx, o, runKey(o, d.Action))
			}
			d = notStarted(o, d, err)
		} else {
			r.recordDependencies(obj, o, d.Action)
		}
	case Cancel:
		if err := r.cancel(ctx, d.Action.Run); err != nil {
			return outcome.Retry(err)
		}
	case CancelAndRelease:
		if err := r.cancel(ctx, d.Action.Run); err != nil {
			return outcome.Retry(err)
		}
		return outcome.DoneOr(r.release(ctx, obj, o, "released without deleting from the backend, as the annotation asks; its pending PipelineRun was cancelled"))
	case Release:
		message := "deleted from the backend"
		switch {
		case o.WorkflowNamespaceTerminating:
			message = fmt.Sprintf("released without deleting from the backend: namespace %s, where its operations run, is being deleted (backend id %q of provider %s is left as it is)",
				o.WorkflowNamespace, o.Status.Provider.ID, o.Status.Provider.Name)
		case o.SkipBackendDeletion:
			message = "released without deleting from the backend, as the annotation asks"
		}
		return outcome.DoneOr(r.release(ctx, obj, o, message))
	}

	if d.Report != nil {
		status.Set(&s.Conditions, obj.GetGeneration(), *d.Report)
	}
	if d.Observed {
		s.ObservedGeneration = obj.GetGeneration()
	}
	if err := r.statusWriter().Patch(ctx, base, obj); err != nil {
		return outcome.Retry(errors.Join(d.Outcome.Err, err))
	}
	r.wrote(obj, base.GetResourceVersion())
	statusWritten(r.Kind.Traits().Name, obj)
	if pruning {
		r.prune(ctx, o)
	}
	return d.Outcome
}

// startRun prepares and creates the run a.
func (r *Reconciler[T]) startRun(ctx context.Context, obj T, o Observation, a Action) error {
	traits, in := r.Kind.Traits(), r.Kind.Inputs(obj)
	var artifacts *ArtifactLocation
	if traits.UsesArtifacts && a.Op != contract.OperationDelete { // deleting needs no artifacts, and must not wait on them
		var err error
		if artifacts, err = resolveArtifacts(ctx, r.configMaps(), obj.GetNamespace(), o.WorkflowNamespace, in.ArtifactRepository, o.Provider); err != nil {
			return err
		}
	}
	var compile *compileRun
	if op, _ := taskdef.Find(contract.Kind(traits.Name), a.Op); op.Compiles {
		compile = compileSettings(o.Provider, r.CompileVolume, o.Compile)
	}
	pr, err := r.builders.build(ctx, runRequest{obj: obj, spec: in.Spec, kind: traits.Name, provider: o.Provider, op: a.Op, version: a.Version,
		attempt: a.Attempt, ordinal: a.Ordinal, namespace: o.WorkflowNamespace, helper: r.HelperImage, pipeline: pipelineRef(o, a.Op),
		parameters: resolvedParameters(o, a.Op), artifacts: artifacts, now: r.now(), timeout: r.OperationTimeout,
		compile: compile})
	var spec *specError
	switch {
	case errors.As(err, &spec):
		return err
	case err != nil:
		return &internalError{err}
	}
	if err := r.Client.Create(ctx, pr); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return &createRefusal{namespace: pr.Namespace, name: pr.Name, err: err}
		}
		switch ours, getErr := r.madeFor(ctx, obj, pr); {
		case getErr != nil:
			return getErr // transient: look again with the queue's backoff
		case !ours:
			return &createRefusal{namespace: pr.Namespace, name: pr.Name, err: err}
		}
		// Created before, not in the cache yet: wait for it as for a new one.
	} else {
		runStarted(r.Kind.Traits().Name, a.Op)
	}
	r.expected.Store(obj.GetUID(), expectation{name: pr.Name, expires: r.now().Add(expectationTimeout)})
	return nil
}

// resolvedParameters are the parameters a create or update runs with when
// any was resolved from valueFrom; nil otherwise (the spec's values are
// all, and sending them twice would double the resource's size).
func resolvedParameters(o Observation, op contract.Operation) *[]contract.Parameter {
	if o.Resolved == nil || op == contract.OperationDelete || !o.Resolved.UsesValueFrom {
		return nil
	}
	params := o.Resolved.Parameters
	if params == nil {
		params = []contract.Parameter{}
	}
	return &params
}

// recordDependencies notes in the status which upstream runs a create or
// update resolved its parameters from, and says which optional ones it
// left out.
func (r *Reconciler[T]) recordDependencies(obj T, o Observation, a Action) {
	if o.Resolved == nil || a.Op == contract.OperationDelete {
		return
	}
	r.Kind.Record(obj, Outputs{Dependencies: &pipelinesv1beta1.Dependencies{RunConfigurations: o.Resolved.Dependencies}})
	for _, omitted := range o.Resolved.Omitted {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "DependencyOmitted", "Resolve", "optional %s left out", omitted)
	}
}

// pipelineRef is the pipeline a create or update runs, nil for deletes and
// kinds that run none.
func pipelineRef(o Observation, op contract.Operation) *contract.PipelineRef {
	if o.Pipeline == nil || op == contract.OperationDelete {
		return nil
	}
	return &contract.PipelineRef{Name: o.Pipeline.Name, Version: o.Pipeline.Version, ID: o.Pipeline.ID}
}

// madeFor says whether the existing run named as pr was made for obj (a
// create whose answer was lost); anything else squats on the name. An error
// reading it (including its deletion meanwhile) is for a later look.
func (r *Reconciler[T]) madeFor(ctx context.Context, obj Subject, pr *tektonv1.PipelineRun) (bool, error) {
	existing := &tektonv1.PipelineRun{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pr), existing); err != nil {
		return false, fmt.Errorf("reading PipelineRun %s/%s whose name is taken: %w", pr.Namespace, pr.Name, err)
	}
	return existing.Labels[contract.LabelOwnerUID] == string(obj.GetUID()), nil
}

// cancel asks Tekton to stop a running PipelineRun (once; gone is fine).
func (r *Reconciler[T]) cancel(ctx context.Context, run *RunRecord) error {
	if run.Cancelled {
		return nil
	}
	pr := &tektonv1.PipelineRun{}
	pr.Namespace, pr.Name = run.Namespace, run.Name
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"status":"`+tektonv1.PipelineRunSpecStatusCancelled+`"}}`))
	if err := r.Client.Patch(ctx, pr, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cancelling PipelineRun %s/%s: %w", run.Namespace, run.Name, err)
	}
	return nil
}

// release lets a resource being deleted go, and its runs with it (those in
// another namespace have no owner reference to take them). The runs that
// make decide release it again go only after the finalizer: should the
// operator stop in between, it releases the resource again rather than
// find its record gone (BackendRecordMissing); the leftover is at most those
// two runs (the newest succeeded create or update, and delete).
func (r *Reconciler[T]) release(ctx context.Context, obj T, o Observation, message string) error {
	for _, run := range unneeded(o.Runs) {
		r.deleteRun(ctx, run)
	}
	if err := status.RemoveFinalizer(ctx, r.Client, obj, pipelinesv1beta1.FinalizerBackend); err != nil {
		return err
	}
	if err := r.deleteRuns(ctx, obj, o.WorkflowNamespace); err != nil {
		// The resource is gone; nothing will come back for these.
		ctrl.LoggerFrom(ctx).Error(err, "deleting the PipelineRuns of a released resource", "namespace", o.WorkflowNamespace)
	}
	r.expected.Delete(obj.GetUID())
	r.written.Delete(obj.GetUID())
	resourceGone(r.Kind.Traits().Name, client.ObjectKeyFromObject(obj))
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(pipelinesv1beta1.StateDeleted), "Delete", "%s", message)
	return nil
}
