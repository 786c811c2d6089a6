package tektonprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
)

// Backend does the provider's operations in one namespace (the one the
// provider step runs in, where its service account has its rights).
type Backend struct {
	Client    client.Client
	Namespace string
	// Image is the provider's own image, pinned: the launcher of compiled
	// pipelines and the image of schedules' trigger Jobs.
	Image string
}

// Request is one operation: the contract's documents plus the definition
// for pipeline create and update.
type Request struct {
	Kind, Operation string
	Resource        contract.Resource
	Config          contract.ProviderConfig
	Definition      []byte
}

// Do performs the operation and returns the backend id. Its errors are the
// provider's answer, in words a user can act on.
func (b *Backend) Do(ctx context.Context, req Request) (string, error) {
	var settings Settings
	if req.Operation != "delete" {
		// A delete needs none, so a bad parameter never holds a resource's
		// deletion.
		var err error
		if settings, err = SettingsFrom(req.Config); err != nil {
			return "", err
		}
	}
	switch req.Kind + " " + req.Operation {
	case "pipeline create", "pipeline update":
		return b.uploadPipeline(ctx, req)
	case "pipeline delete":
		return b.deletePipeline(ctx, req.Resource)
	case "run create":
		return b.createRun(ctx, req.Resource, settings)
	case "run delete":
		return b.deleteRun(ctx, req.Resource)
	case "runschedule create", "runschedule update":
		return b.applySchedule(ctx, req, settings)
	case "runschedule delete":
		return b.deleteSchedule(ctx, req.Resource)
	case "experiment create", "experiment update", "experiment delete":
		return ExperimentID(req.Resource), nil
	}
	return "", fmt.Errorf("the Tekton provider does not know the operation %q %q", req.Kind, req.Operation)
}

func (b *Backend) uploadPipeline(ctx context.Context, req Request) (string, error) {
	if len(req.Definition) == 0 {
		return "", errors.New("no pipeline definition was given")
	}
	p, err := PipelineFor(req.Definition, req.Resource, req.Config, b.Namespace, b.Image)
	if err != nil {
		return "", fmt.Errorf("compiling pipeline version %s: %w", req.Resource.Version, err)
	}
	if err := b.createOrReplace(ctx, p, &tektonv1.Pipeline{}); err != nil {
		return "", fmt.Errorf("storing Tekton Pipeline %s: %w", p.Name, err)
	}
	return PipelineID(req.Resource), nil
}

func (b *Backend) deletePipeline(ctx context.Context, res contract.Resource) (string, error) {
	id := PipelineID(res)
	var list tektonv1.PipelineList
	if err := b.Client.List(ctx, &list, client.InNamespace(b.Namespace),
		client.MatchingLabels{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelPipelineID: naming.LabelValue(id)}); err != nil {
		return "", fmt.Errorf("listing the pipeline's versions: %w", err)
	}
	for i := range list.Items {
		if err := client.IgnoreNotFound(b.Client.Delete(ctx, &list.Items[i])); err != nil {
			return "", fmt.Errorf("deleting Tekton Pipeline %s: %w", list.Items[i].Name, err)
		}
	}
	return id, nil
}

// pipelineOf reads the Tekton Pipeline of the version a run runs.
func (b *Backend) pipelineOf(ctx context.Context, res contract.Resource) (*tektonv1.Pipeline, error) {
	ref := res.Pipeline
	if ref == nil || ref.ID == "" {
		return nil, errors.New("the operator named no synchronised pipeline for this run")
	}
	var p tektonv1.Pipeline
	name := PipelineVersionName(ref.ID, ref.Version)
	if err := b.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("pipeline %s version %s is not in the backend (no Tekton Pipeline %s): synchronise the Pipeline first", ref.Name, ref.Version, name)
		}
		return nil, err
	}
	return &p, nil
}

func (b *Backend) runTemplate(ctx context.Context, res contract.Resource, settings Settings, name string) (*tektonv1.PipelineRun, error) {
	var spec pipelinesv1beta1.RunSpec
	if err := json.Unmarshal(res.Spec, &spec); err != nil {
		return nil, fmt.Errorf("reading the %s's spec: %w", res.Kind, err)
	}
	p, err := b.pipelineOf(ctx, res)
	if err != nil {
		return nil, err
	}
	params, err := contract.RunParameters(res, spec.Parameters)
	if err != nil {
		return nil, err
	}
	spec.Parameters = nil
	for _, param := range params {
		spec.Parameters = append(spec.Parameters, pipelinesv1beta1.RuntimeParameter{Name: param.Name, Value: param.Value})
	}
	return PipelineRunFor(RunInputs{Name: name, Namespace: b.Namespace, ResourceNamespace: res.Metadata.Namespace, Pipeline: p, Spec: spec,
		Labels: resourceLabels(res), Settings: settings, Annotations: resourceAnnotations(res)})
}

func (b *Backend) createRun(ctx context.Context, res contract.Resource, settings Settings) (string, error) {
	name := RunName(res)
	if res.Status.Provider.ID != "" {
		name = res.Status.Provider.ID
	}
	pr, err := b.runTemplate(ctx, res, settings, name)
	if err != nil {
		return "", err
	}
	err = b.Client.Create(ctx, pr)
	if apierrors.IsAlreadyExists(err) {
		// A retried create: the run is ours if it carries this Run's UID.
		var existing tektonv1.PipelineRun
		if err := b.Client.Get(ctx, client.ObjectKeyFromObject(pr), &existing); err != nil {
			return "", err
		}
		if existing.Labels[contract.LabelRunUID] != res.Metadata.UID {
			return "", fmt.Errorf("a PipelineRun named %s exists that was not made for this Run", name)
		}
		return name, nil
	}
	if err != nil {
		return "", fmt.Errorf("creating PipelineRun %s: %w", name, err)
	}
	return name, nil
}

func (b *Backend) deleteRun(ctx context.Context, res contract.Resource) (string, error) {
	name := res.Status.Provider.ID
	if name == "" {
		name = RunName(res)
	}
	var pr tektonv1.PipelineRun
	err := b.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &pr)
	if apierrors.IsNotFound(err) {
		return name, nil
	}
	if err != nil {
		return "", err
	}
	if pr.Labels[contract.LabelRunUID] != res.Metadata.UID {
		return "", fmt.Errorf("PipelineRun %s was not made for this Run: not deleting it", name)
	}
	if !pr.IsDone() && pr.Spec.Status != tektonv1.PipelineRunSpecStatusCancelled {
		patch := client.MergeFrom(pr.DeepCopy())
		pr.Spec.Status = tektonv1.PipelineRunSpecStatusCancelled
		if err := b.Client.Patch(ctx, &pr, patch); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("cancelling PipelineRun %s: %w", name, err)
		}
	}
	if err := client.IgnoreNotFound(b.Client.Delete(ctx, &pr)); err != nil {
		return "", fmt.Errorf("deleting PipelineRun %s: %w", name, err)
	}
	return name, nil
}

func (b *Backend) applySchedule(ctx context.Context, req Request, settings Settings) (string, error) {
	res := req.Resource
	var spec pipelinesv1beta1.RunScheduleSpec
	if err := json.Unmarshal(res.Spec, &spec); err != nil {
		return "", fmt.Errorf("reading the RunSchedule's spec: %w", err)
	}
	name := CronJobName(res)
	template, err := b.runTemplate(ctx, res, settings, "")
	if err != nil {
		return "", err
	}
	cj, err := CronJobFor(CronJobInputs{Name: name, Namespace: b.Namespace, Schedule: spec.Schedule, Template: template,
		Image: b.Image, ServiceAccount: req.Config.Spec.ServiceAccount, Labels: resourceLabels(res)})
	if err != nil {
		return "", err
	}
	if err := b.createOrReplace(ctx, cj, &batchv1.CronJob{}); err != nil {
		return "", fmt.Errorf("storing CronJob %s: %w", name, err)
	}
	return name, nil
}

func (b *Backend) deleteSchedule(ctx context.Context, res contract.Resource) (string, error) {
	name := res.Status.Provider.ID
	if name == "" {
		name = CronJobName(res)
	}
	var cj batchv1.CronJob
	err := b.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: name}, &cj)
	if apierrors.IsNotFound(err) {
		return name, nil
	}
	if err != nil {
		return "", err
	}
	if cj.Labels[contract.LabelRunScheduleUID] != res.Metadata.UID {
		return "", fmt.Errorf("CronJob %s was not made for this RunSchedule: not deleting it", name)
	}
	if err := client.IgnoreNotFound(b.Client.Delete(ctx, &cj, client.PropagationPolicy("Background"))); err != nil {
		return "", fmt.Errorf("deleting CronJob %s: %w", name, err)
	}
	// Then the runs it started (one running stops with its pods).
	if err := deleteScheduledRuns(ctx, b.Client, b.Namespace, res.Metadata.UID, 0); err != nil {
		return "", err
	}
	return name, nil
}

// KeepScheduledRuns is how many finished runs of a schedule the trigger
// keeps; older ones are deleted (their artifacts stay in the repository).
const KeepScheduledRuns = 10

// deleteScheduledRuns deletes the runs of the RunSchedule with uid but the
// newest keep finished ones (and, when keep > 0, any unfinished one).
func deleteScheduledRuns(ctx context.Context, c client.Client, namespace, uid string, keep int) error {
	var list tektonv1.PipelineRunList
	if err := c.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingLabels{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelRunScheduleUID: uid}); err != nil {
		return fmt.Errorf("listing the schedule's runs: %w", err)
	}
	for _, pr := range PrunableRuns(list.Items, keep) {
		if err := client.IgnoreNotFound(c.Delete(ctx, pr)); err != nil {
			return fmt.Errorf("deleting PipelineRun %s: %w", pr.Name, err)
		}
	}
	return nil
}

// PrunableRuns are the runs to delete so that the newest keep finished
// ones stay; keep 0 means all of them.
func PrunableRuns(runs []tektonv1.PipelineRun, keep int) []*tektonv1.PipelineRun {
	if keep == 0 {
		out := make([]*tektonv1.PipelineRun, len(runs))
		for i := range runs {
			out[i] = &runs[i]
		}
		return out
	}
	var finished []*tektonv1.PipelineRun
	for i := range runs {
		if runs[i].IsDone() {
			finished = append(finished, &runs[i])
		}
	}
	// Scheduled runs are named after their minute: newest last by name.
	sort.Slice(finished, func(i, j int) bool { return finished[i].Name < finished[j].Name })
	if len(finished) <= keep {
		return nil
	}
	return finished[:len(finished)-keep]
}

// createOrReplace creates obj, or replaces the spec, labels and
// annotations of the existing object of its name.
func (b *Backend) createOrReplace(ctx context.Context, obj, existing client.Object) error {
	err := b.Client.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := b.Client.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	// Replace only what this provider made for the same resource.
	for _, key := range []string{contract.LabelPipelineID, contract.LabelRunScheduleUID} {
		if want := obj.GetLabels()[key]; want != "" && existing.GetLabels()[key] != want {
			return fmt.Errorf("%s exists and was not made for this resource (label %s is %q): not replacing it",
				obj.GetName(), key, existing.GetLabels()[key])
		}
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	return b.Client.Update(ctx, obj)
}

// Trigger creates the PipelineRun of one scheduled time, named after the
// Job: a retried Job pod, or a second Job of the same time, finds it. A
// time outside the schedule's window creates nothing. It reports whether
// it created the run.
func Trigger(ctx context.Context, c client.Client, template *tektonv1.PipelineRun, jobName string, start, end time.Time) (bool, error) {
	due, err := meta.ScheduledTime(jobName)
	if err != nil {
		return false, err
	}
	if !InWindow(due, start, end) {
		return false, nil
	}
	pr := template.DeepCopy()
	pr.Name = jobName
	if pr.Annotations == nil {
		pr.Annotations = map[string]string{}
	}
	pr.Annotations[contract.AnnotationScheduledTime] = due.Format(time.RFC3339)
	err = c.Create(ctx, pr)
	if apierrors.IsAlreadyExists(err) {
		// A retried Job: the run is there, if it is this schedule's.
		var existing tektonv1.PipelineRun
		if err := c.Get(ctx, client.ObjectKeyFromObject(pr), &existing); err != nil {
			return false, err
		}
		if uid := pr.Labels[contract.LabelRunScheduleUID]; existing.Labels[contract.LabelRunScheduleUID] != uid {
			return false, fmt.Errorf("a PipelineRun named %s exists that was not made for this schedule", pr.Name)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Bound what the schedule leaves behind.
	return true, deleteScheduledRuns(ctx, c, pr.Namespace, pr.Labels[contract.LabelRunScheduleUID], KeepScheduledRuns)
}
