// Package runconfiguration is the RunConfiguration controller. A
// RunConfiguration has no backend object of its own: it owns one
// RunSchedule per schedule and creates Runs when its triggers fire, each
// with the pipeline version it resolved pinned, and the other controllers
// take them to the backend. Creating one creates its RunSchedules and, for
// each onChange trigger, a Run; it is Ready once they are. Updating it
// replaces only the RunSchedules whose schedule changed and updates the
// others in place; a new run spec (onChange runSpec) or a new version of
// the Pipeline (onChange pipeline) starts a Run and re-pins the schedules.
// triggers.runConfigurations starts a Run each time an upstream
// RunConfiguration (same namespace) records a new latest succeeded run,
// once per upstream run (status.triggers), and status.dependencies shows
// the upstream runs valueFrom parameters would resolve from.
// Deleting it holds nothing: it has no finalizer, and its RunSchedules and
// Runs go with it through owner references, each then deleted from the
// backend as its own kind is. Tests: envtest_test.go, with the whole operator.
package runconfiguration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/predicates"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Reconciler reconciles RunConfigurations.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// RetryAfter is unused by the RunConfiguration controller, which is woken
	// by watches only; kept so all controllers are configured alike.
	RetryAfter time.Duration
	// Seal tells the latest runs the operator recorded from those anyone
	// who may write a status could have written: only the former trigger.
	Seal *seal.Key
}

// Reconcile brings a RunConfiguration's RunSchedules and Runs up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rc := &pipelinesv1beta1.RunConfiguration{}
	if err := r.Client.Get(ctx, req.NamespacedName, rc); err != nil || !rc.DeletionTimestamp.IsZero() {
		// Owned RunSchedules and Runs go with it (owner references).
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	base := rc.DeepCopy()
	o := r.synchronize(ctx, rc)
	if o.Is(outcome.Transient) {
		return o.Result()
	}
	w := status.Writer{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(*pipelinesv1beta1.RunConfiguration).Status.Conditions
	}}
	if err := w.Patch(ctx, base, rc); err != nil {
		return outcome.Retry(err).Result()
	}
	return o.Result()
}

// synchronize makes what the RunConfiguration's triggers ask for and sets
// its status from its children's readiness.
func (r *Reconciler) synchronize(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration) outcome.Outcome {
	pinned, version, pipelineGeneration, err := r.pinPipeline(ctx, rc)
	if err != nil {
		return outcome.Retry(err)
	}
	if pinned == "" {
		// The Pipeline watch wakes it.
		setReport(rc, status.Progressing(pendingState(rc),
			fmt.Sprintf("waiting for Pipeline %s/%s to have a version", rc.Namespace, rc.Spec.Run.Pipeline)), false)
		return outcome.DoneOutcome()
	}
	runSpec := rc.Spec.Run.DeepCopy()
	runSpec.Pipeline = pinned
	// The pipeline reference has its own trigger: a new pinned version must
	// not also count as a new run spec.
	withoutPipeline := rc.Spec.Run.DeepCopy()
	withoutPipeline.Pipeline = ""
	runSpecVersion, err := spechash.Of(withoutPipeline)
	if err != nil {
		return outcome.Retry(err)
	}
	schedules, err := r.reconcileSchedules(ctx, rc, *runSpec)
	if err != nil {
		return outcome.Retry(err)
	}
	if slices.Contains(rc.Spec.Triggers.OnChange, pipelinesv1beta1.OnChangePipeline) && rc.Status.TriggeredPipelineVersion != version {
		fired := contract.TriggerIndicator{Type: contract.TriggerOnChangePipeline, Source: rc.Spec.Run.Pipeline.Name(), SourceNamespace: rc.Namespace}
		if err := r.createRun(ctx, rc, *runSpec, fired, pipelinesv1beta1.TriggerLabelPipeline, version, pipelineGeneration); err != nil {
			return outcome.Retry(err)
		}
		rc.Status.TriggeredPipelineVersion = version
	}
	if slices.Contains(rc.Spec.Triggers.OnChange, pipelinesv1beta1.OnChangeRunSpec) && rc.Status.TriggeredRunSpecVersion != runSpecVersion {
		fired := contract.TriggerIndicator{Type: contract.TriggerOnChangeRunSpec, Source: rc.Name, SourceNamespace: rc.Namespace}
		if err := r.createRun(ctx, rc, *runSpec, fired, pipelinesv1beta1.TriggerLabelRunSpec, runSpecVersion, strconv.FormatInt(rc.Generation, 10)); err != nil {
			return outcome.Retry(err)
		}
		rc.Status.TriggeredRunSpecVersion = runSpecVersion
	}
	cycle, err := r.triggerCycle(ctx, rc)
	if err != nil {
		return outcome.Retry(err)
	}
	if cycle != nil {
		// Firing would start runs forever; the watch on the others wakes it
		// once the cycle is broken.
		setReport(rc, status.Failed(pipelinesv1beta1.ReasonInvalidSpec, fmt.Sprintf(
			"triggers.runConfigurations form a cycle (%s, each triggered by the next): each run would start another forever; remove one of them",
			strings.Join(cycle, " ← "))), true)
		return outcome.DoneOutcome()
	}
	if err := r.fireUpstreamTriggers(ctx, rc, *runSpec); err != nil {
		return outcome.Retry(err)
	}
	if err := r.recordDependencies(ctx, rc); err != nil {
		return outcome.Retry(err)
	}
	runs, err := r.latestRuns(ctx, rc)
	if err != nil {
		return outcome.Retry(err)
	}
	rc.Status.Version = version + "-" + runSpecVersion
	rc.Status.Provider.Name = pipelinesv1beta1.ProviderKey(rc.Spec.Run.Provider, rc.Namespace).String()
	report, final := aggregate(children(schedules, runs), pendingState(rc),
		fmt.Sprintf("%d RunSchedules for pipeline %s", len(schedules), pinned))
	setReport(rc, report, final)
	return outcome.DoneOutcome()
}

// setReport sets both conditions; observedGeneration only when the outcome
// is final for this generation.
func setReport(rc *pipelinesv1beta1.RunConfiguration, r status.Report, final bool) {
	status.Set(&rc.Status.Conditions, rc.Generation, r)
	if final {
		rc.Status.ObservedGeneration = rc.Generation
	}
}

// pendingState is the Synchronized state while the RunConfiguration is not
// yet in effect.
func pendingState(rc *pipelinesv1beta1.RunConfiguration) pipelinesv1beta1.SynchronizationState {
	if rc.Status.Version == "" {
		return pipelinesv1beta1.StateCreating
	}
	return pipelinesv1beta1.StateUpdating
}

// latestRuns are the Runs of the triggers' latest firings.
func (r *Reconciler) latestRuns(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration) ([]pipelinesv1beta1.Run, error) {
	list := &pipelinesv1beta1.RunList{}
	if err := r.Client.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID)}); err != nil {
		return nil, err
	}
	latest := map[[2]string]bool{
		{pipelinesv1beta1.TriggerLabelPipeline, naming.LabelValue(rc.Status.TriggeredPipelineVersion)}: rc.Status.TriggeredPipelineVersion != "",
		{pipelinesv1beta1.TriggerLabelRunSpec, naming.LabelValue(rc.Status.TriggeredRunSpecVersion)}:   rc.Status.TriggeredRunSpecVersion != "",
	}
	for name, by := range rc.Status.Triggers.RunConfigurations {
		latest[[2]string{pipelinesv1beta1.TriggerLabelRunConfiguration, naming.LabelValue(upstreamSighting(name, by.ProviderID))}] = true
	}
	var runs []pipelinesv1beta1.Run
	for _, run := range list.Items {
		if latest[[2]string{run.Labels[pipelinesv1beta1.LabelTrigger], run.Labels[pipelinesv1beta1.LabelTriggerSource]}] {
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// upstreamSighting identifies one upstream run that fired the trigger.
func upstreamSighting(name, providerID string) string { return name + "/" + providerID }

// fireUpstreamTriggers starts a Run for each upstream RunConfiguration of
// triggers.runConfigurations whose latest succeeded run is one this
// RunConfiguration has not fired for yet (also on first sight). The Run's
// name derives from the upstream run, so a crash between creating it and
// recording it in status.triggers creates no second.
func (r *Reconciler) fireUpstreamTriggers(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration, runSpec pipelinesv1beta1.RunSpec) error {
	for _, name := range rc.Spec.Triggers.RunConfigurations {
		latest, err := r.latestSucceeded(ctx, rc.Namespace, name)
		if err != nil {
			return err
		}
		if latest == nil || rc.Status.Triggers.RunConfigurations[name].ProviderID == latest.ProviderID {
			continue
		}
		sighting := upstreamSighting(name, latest.ProviderID)
		fired := contract.TriggerIndicator{Type: contract.TriggerRunConfiguration, Source: name, SourceNamespace: rc.Namespace}
		if err := r.createRun(ctx, rc, runSpec, fired, pipelinesv1beta1.TriggerLabelRunConfiguration, sighting, sighting); err != nil {
			return err
		}
		if rc.Status.Triggers.RunConfigurations == nil {
			rc.Status.Triggers.RunConfigurations = map[string]pipelinesv1beta1.TriggeredBy{}
		}
		rc.Status.Triggers.RunConfigurations[name] = pipelinesv1beta1.TriggeredBy{ProviderID: latest.ProviderID}
	}
	for name := range rc.Status.Triggers.RunConfigurations {
		if !slices.Contains(rc.Spec.Triggers.RunConfigurations, name) {
			delete(rc.Status.Triggers.RunConfigurations, name)
		}
	}
	return nil
}

// triggerCycle finds a cycle of triggers.runConfigurations through rc
// among the RunConfigurations of its namespace.
func (r *Reconciler) triggerCycle(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration) ([]string, error) {
	if len(rc.Spec.Triggers.RunConfigurations) == 0 {
		return nil, nil
	}
	list := &pipelinesv1beta1.RunConfigurationList{}
	if err := r.Client.List(ctx, list, client.InNamespace(rc.Namespace)); err != nil {
		return nil, err
	}
	upstreams := map[string][]string{rc.Name: rc.Spec.Triggers.RunConfigurations}
	for _, other := range list.Items {
		if other.Name != rc.Name {
			upstreams[other.Name] = other.Spec.Triggers.RunConfigurations
		}
	}
	return triggerCycle(rc.Name, upstreams), nil
}

// recordDependencies notes, for each RunConfiguration a valueFrom
// parameter names, its latest succeeded run: what a Run started now would
// resolve its parameters from.
func (r *Reconciler) recordDependencies(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration) error {
	deps := map[string]pipelinesv1beta1.RunReference{}
	for _, name := range pipelinesv1beta1.DependencyNames(rc.Spec.Run.Parameters) {
		latest, err := r.latestSucceeded(ctx, rc.Namespace, name)
		if err != nil {
			return err
		}
		if latest != nil {
			deps[name] = *latest
		}
	}
	rc.Status.Dependencies.RunConfigurations = nil
	if len(deps) > 0 {
		rc.Status.Dependencies.RunConfigurations = deps
	}
	return nil
}

// latestSucceeded is the latest succeeded run of RunConfiguration name in
// namespace; nil when it has none or does not exist.
func (r *Reconciler) latestSucceeded(ctx context.Context, namespace, name string) (*pipelinesv1beta1.RunReference, error) {
	up := &pipelinesv1beta1.RunConfiguration{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, up); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return r.Seal.Latest(up), nil
}

// upstreamNames are the RunConfigurations rc depends on or is triggered by.
func upstreamNames(rc *pipelinesv1beta1.RunConfiguration) []string {
	names := append(pipelinesv1beta1.DependencyNames(rc.Spec.Run.Parameters), rc.Spec.Triggers.RunConfigurations...)
	slices.Sort(names)
	return slices.Compact(names)
}

// pinPipeline returns "name:version", the version and what identifies this
// sighting of it: as referenced (the RunConfiguration's generation), or the
// referenced Pipeline's current version (its observed generation); "" while
// the Pipeline has no version.
func (r *Reconciler) pinPipeline(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration) (pipelinesv1beta1.PipelineReference, string, string, error) {
	name, version, hasVersion := strings.Cut(string(rc.Spec.Run.Pipeline), ":")
	if hasVersion {
		return rc.Spec.Run.Pipeline, version, "rc-" + strconv.FormatInt(rc.Generation, 10), nil
	}
	p := &pipelinesv1beta1.Pipeline{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: rc.Namespace, Name: name}, p); err != nil {
		return "", "", "", client.IgnoreNotFound(err)
	}
	if p.Status.Version == "" || !meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady) {
		return "", "", "", nil
	}
	return pipelinesv1beta1.PipelineReference(name + ":" + p.Status.Version), p.Status.Version,
		"pipeline-" + strconv.FormatInt(p.Status.ObservedGeneration, 10), nil
}

// scheduleName is stable per schedule: changing a schedule replaces its
// RunSchedule; an unchanged one is kept (and updated in place when the run
// spec changes).
func scheduleName(rc *pipelinesv1beta1.RunConfiguration, s pipelinesv1beta1.Schedule) string {
	hash, _ := spechash.Of(s)
	return naming.Compact(253, rc.Name, hash[:8])
}

// reconcileSchedules makes the owned RunSchedules match the schedules and
// returns those kept (the ones it creates are not Ready yet: nil).
func (r *Reconciler) reconcileSchedules(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration,
	runSpec pipelinesv1beta1.RunSpec) ([]*pipelinesv1beta1.RunSchedule, error) {
	owned := &pipelinesv1beta1.RunScheduleList{}
	if err := r.Client.List(ctx, owned, client.InNamespace(rc.Namespace), client.MatchingLabels{pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID)}); err != nil {
		return nil, err
	}
	var current []*pipelinesv1beta1.RunSchedule
	desired := map[string]pipelinesv1beta1.RunScheduleSpec{}
	for _, s := range rc.Spec.Triggers.Schedules {
		desired[scheduleName(rc, s)] = pipelinesv1beta1.RunScheduleSpec{RunSpec: runSpec, Schedule: s}
	}
	for i := range owned.Items {
		existing := &owned.Items[i]
		spec, keep := desired[existing.Name]
		switch {
		case !keep:
			if err := r.Client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("deleting RunSchedule %s: %w", existing.Name, err)
			}
			continue
		case !equality.Semantic.DeepEqual(existing.Spec, spec):
			patch := client.MergeFrom(existing.DeepCopy())
			existing.Spec = spec
			if err := r.Client.Patch(ctx, existing, patch); err != nil {
				return nil, fmt.Errorf("updating RunSchedule %s: %w", existing.Name, err)
			}
		}
		current = append(current, existing)
		delete(desired, existing.Name)
	}
	for name, spec := range desired {
		rs := &pipelinesv1beta1.RunSchedule{
			ObjectMeta: metav1.ObjectMeta{Namespace: rc.Namespace, Name: name, Labels: map[string]string{
				pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID), pipelinesv1beta1.LabelTrigger: pipelinesv1beta1.TriggerLabelSchedule, pipelinesv1beta1.LabelTriggerSource: naming.LabelValue(rc.Name),
			}},
			Spec: spec,
		}
		if err := controllerutil.SetControllerReference(rc, rs, r.Client.Scheme()); err != nil {
			return nil, err
		}
		if err := r.Client.Create(ctx, rs); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating RunSchedule %s: %w", name, err)
		}
		current = append(current, rs)
	}
	return current, nil
}

// createRun creates the Run of one trigger firing; its name is derived from
// the trigger, version and sighting, so a retry finds it rather than
// starting another, while a change back to an earlier version still fires.
// fired says what fired, for the backend (kfp-operator's trigger indicator).
func (r *Reconciler) createRun(ctx context.Context, rc *pipelinesv1beta1.RunConfiguration, spec pipelinesv1beta1.RunSpec,
	fired contract.TriggerIndicator, trigger, version, sighting string) error {
	run := &pipelinesv1beta1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: rc.Namespace,
			Name: naming.Name([]string{rc.Name, trigger}, string(rc.UID), trigger, version, sighting),
			Labels: map[string]string{
				pipelinesv1beta1.LabelOwnerRunConfiguration: string(rc.UID), pipelinesv1beta1.LabelTrigger: trigger, pipelinesv1beta1.LabelTriggerSource: naming.LabelValue(version),
			},
			Annotations: fired.Annotations()},
		Spec: spec,
	}
	if err := controllerutil.SetControllerReference(rc, run, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, run); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Run for trigger %s: %w", trigger, err)
	}
	return nil
}

// SetupWithManager registers the controller; it watches what it owns and
// the Pipelines its RunConfigurations reference.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &pipelinesv1beta1.RunConfiguration{}, contract.IndexPipeline, func(o client.Object) []string {
		name, _, _ := strings.Cut(string(o.(*pipelinesv1beta1.RunConfiguration).Spec.Run.Pipeline), ":")
		return []string{name}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &pipelinesv1beta1.RunConfiguration{}, contract.IndexUpstream, func(o client.Object) []string {
		return upstreamNames(o.(*pipelinesv1beta1.RunConfiguration))
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&pipelinesv1beta1.RunConfiguration{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&pipelinesv1beta1.RunSchedule{}).
		Owns(&pipelinesv1beta1.Run{}).
		Watches(&pipelinesv1beta1.Pipeline{}, handler.EnqueueRequestsFromMapFunc(r.referencing(contract.IndexPipeline))).
		// An upstream RunConfiguration's new latest succeeded run fires
		// triggers.runConfigurations and changes status.dependencies.
		Watches(&pipelinesv1beta1.RunConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.referencing(contract.IndexUpstream)),
			builder.WithPredicates(predicates.LatestRunsChanged)).
		WithOptions(opts).
		Named("runconfiguration").
		Complete(r)
}

// referencing maps an object to the RunConfigurations of its namespace
// that name it (through index).
func (r *Reconciler) referencing(index string) handler.MapFunc {
	return func(ctx context.Context, referenced client.Object) []reconcile.Request {
		list := &pipelinesv1beta1.RunConfigurationList{}
		if err := r.Client.List(ctx, list, client.InNamespace(referenced.GetNamespace()), client.MatchingFields{index: referenced.GetName()}); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return reqs
	}
}
