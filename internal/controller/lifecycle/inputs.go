package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

func jsonParam(name string, v any) (tektonv1.Param, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return tektonv1.Param{}, fmt.Errorf("encoding %s: %w", name, err)
	}
	return generator.StringParam(name, contract.EncodeParam(data)), nil
}

// builders keeps one generator.Builder per operation shape, so Tekton's
// validation verdicts are remembered across reconciles.
type builders struct {
	byTask sync.Map // task name -> *generator.Builder
}

func (b *builders) forOperation(kind string, op contract.Operation) (*generator.Builder, taskdef.Operation, error) {
	operation, shape, err := pipelines.ForOperation(contract.Kind(kind), op)
	if err != nil {
		return nil, operation, err
	}
	if builder, ok := b.byTask.Load(operation.TaskName()); ok {
		return builder.(*generator.Builder), operation, nil
	}
	builder, _ := b.byTask.LoadOrStore(operation.TaskName(), generator.NewBuilder(shape))
	return builder.(*generator.Builder), operation, nil
}

// runRequest is one operation to run for a resource.
type runRequest struct {
	obj       Subject
	spec      any // obj's spec (Inputs.Spec)
	kind      string
	provider  *pipelinesv1beta1.Provider
	op        contract.Operation
	version   string
	attempt   int // failed runs of this operation at this version
	ordinal   int // the run's number among the resource's runs
	namespace string
	helper    string
	artifacts *ArtifactLocation
	pipeline  *contract.PipelineRef // the pipeline a Run or RunSchedule runs
	// parameters are a Run's, valueFrom resolved; nil for other kinds
	parameters *[]contract.Parameter
	now        time.Time
	timeout    time.Duration
	// compile is set for an operation that compiles.
	compile *compileRun
}

// RunName is the deterministic name of a resource's ordinal-th run, of op
// at version: a retry after a crash finds the run it already created
// instead of starting a second, while a spec that returns to an earlier
// version still gets a run of its own.
func RunName(kind string, obj Subject, op contract.Operation, version string, ordinal int) string {
	return naming.Name([]string{kind, obj.GetName(), string(op)},
		kind, obj.GetNamespace(), obj.GetName(), string(obj.GetUID()), string(op), version, strconv.Itoa(ordinal))
}

// build builds the PipelineRun of req.
func (b *builders) build(ctx context.Context, req runRequest) (*tektonv1.PipelineRun, error) {
	builder, operation, err := b.forOperation(req.kind, req.op)
	if err != nil {
		return nil, err
	}
	if operation.Compiles && (req.compile == nil || req.compile.what == nil) {
		return nil, fmt.Errorf("%s %s compiles, but no compile settings were given", req.kind, req.op)
	}
	params, err := runParams(req)
	if err != nil {
		return nil, err
	}
	run := generator.Run{
		Namespace:          req.namespace,
		Name:               RunName(req.kind, req.obj, req.op, req.version, req.ordinal),
		Labels:             runLabels(req),
		ServiceAccountName: req.provider.Spec.ServiceAccount,
		Params:             params,
		Timeout:            operationTimeout(req.timeout),
	}
	if operation.Compiles {
		run.Workspaces = []tektonv1.WorkspaceBinding{definitionWorkspace(req.compile.volume)}
		run.TaskRunSpecs = []tektonv1.PipelineTaskRunSpec{compileTaskRunSpec(req.compile)}
	}
	pr, err := builder.Build(ctx, run)
	if err != nil {
		return nil, err
	}
	pr.Annotations = runAnnotations(req, operation.Compiles)
	// Tekton keeps a tekton.dev/pipeline label it finds on a run only when
	// generateName is set; the API server ignores generateName beside a name.
	pr.GenerateName = naming.GenerateNamePrefix(req.kind, req.obj.GetName())
	if req.namespace == req.obj.GetNamespace() {
		gvk := req.obj.GetObjectKind().GroupVersionKind()
		pr.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: req.obj.GetName(), UID: req.obj.GetUID(),
			BlockOwnerDeletion: ptr.To(false),
		}}
	}
	return pr, nil
}

// runParams are the params of req's run: the helper image, the resource
// and the provider's configuration, the provider's image and, for a
// compiling operation, what it compiles. It refuses params no step's
// environment can hold.
func runParams(req runRequest) (tektonv1.Params, error) {
	spec, err := json.Marshal(req.spec)
	if err != nil {
		return nil, err
	}
	gvk := req.obj.GetObjectKind().GroupVersionKind()
	resource := contract.Resource{
		ContractVersion: contract.Version,
		APIVersion:      pipelinesv1beta1.GroupVersion.String(),
		Kind:            gvk.Kind,
		Metadata: contract.Metadata{Name: req.obj.GetName(), Namespace: req.obj.GetNamespace(),
			UID: string(req.obj.GetUID()), Generation: req.obj.GetGeneration(), Owner: ownerOf(req.obj)},
		Spec:             spec,
		Status:           contract.ResourceStatus{Provider: req.obj.CommonStatus().Provider},
		Version:          req.version,
		Pipeline:         req.pipeline,
		Parameters:       req.parameters,
		TriggerIndicator: contract.TriggerOf(gvk.Kind, req.obj.GetNamespace(), req.obj.GetName(), req.obj.GetAnnotations()),
	}
	config := contract.ProviderConfig{ContractVersion: contract.Version, Name: req.provider.Name, Namespace: req.provider.Namespace,
		Spec: pinnedSpec(req.provider), ArtifactRepository: req.artifacts, ServiceURL: req.provider.Status.ServiceURL}
	resourceParam, err := jsonParam(taskdef.ParamResource, resource)
	if err != nil {
		return nil, err
	}
	configParam, err := jsonParam(taskdef.ParamProviderConfig, config)
	if err != nil {
		return nil, err
	}
	params := tektonv1.Params{
		generator.StringParam(taskdef.ParamHelperImage, req.helper),
		resourceParam, configParam,
		generator.StringParam(taskdef.ParamProviderImage, req.provider.Status.Image),
	}
	if req.compile != nil && req.compile.what != nil {
		compile, err := compileParams(req.compile, req.artifacts)
		if err != nil {
			return nil, err
		}
		params = append(params, compile...)
	}
	if err := checkEnvSizes(params); err != nil {
		return nil, &specError{err}
	}
	return params, nil
}

// runAnnotations are what a run of req records beyond its labels.
func runAnnotations(req runRequest, compiles bool) map[string]string {
	annotations := map[string]string{
		contract.AnnotationOwner:     req.obj.GetNamespace() + "/" + req.obj.GetName(),
		contract.AnnotationCreatedAt: req.now.UTC().Format(contract.CreatedAtLayout),
		contract.AnnotationOrdinal:   strconv.Itoa(req.ordinal),
		// Whole, as the label may be shortened: a Provider name can be 253 characters.
		contract.AnnotationProvider: req.provider.Namespace + "/" + req.provider.Name,
	}
	if req.pipeline != nil {
		annotations[contract.AnnotationPipelineVersion] = req.pipeline.Version
	}
	if compiles {
		annotations[contract.AnnotationAutoCleanupPVC] = "true"
	}
	return annotations
}

func runLabels(req runRequest) map[string]string {
	return map[string]string{
		contract.LabelManagedBy:      contract.ManagedByOperator,
		contract.LabelOwnerKind:      req.kind,
		contract.LabelOwnerName:      naming.LabelValue(req.obj.GetName()),
		contract.LabelOwnerNamespace: req.obj.GetNamespace(),
		contract.LabelOwnerUID:       string(req.obj.GetUID()),
		contract.LabelOperation:      string(req.op),
		contract.LabelProvider:       naming.LabelValue(req.provider.Name),
		contract.LabelProviderNS:     req.provider.Namespace,
		contract.LabelVersion:        req.version, // a label value (checkVersion)
		contract.LabelAttempt:        strconv.Itoa(req.attempt),
		contract.LabelTektonPipeline: naming.LabelValue(req.kind, req.obj.GetNamespace(), req.obj.GetName()),
	}
}

// pinnedSpec is p's spec with its images replaced by the digests the
// Provider controller pinned (matched by framework name, as everywhere).
func pinnedSpec(p *pipelinesv1beta1.Provider) pipelinesv1beta1.ProviderSpec {
	spec := *p.Spec.DeepCopy()
	// kfp-operator's executionMode: "" means the default.
	spec.ExecutionMode = spec.ExecutionMode.Effective()
	// The provider service's pod settings are the operator's business
	// (internal/contract/schema leaves them out): a literal env value may be
	// a credential, which PipelineRun params would show to their readers.
	spec.PodTemplateEnv, spec.PodTemplateVolumes, spec.PodTemplateVolumeMounts = nil, nil, nil
	if spec.ServiceImage != "" {
		spec.ServiceImage = p.Status.ServiceImage
	} else {
		spec.Image = p.Status.Image
	}
	for i, f := range spec.Frameworks {
		for _, pin := range p.Status.Frameworks {
			if pin.Name == f.Name {
				spec.Frameworks[i].Image = pin.Image
			}
		}
	}
	return spec
}

// maxEnvValue is the longest value one environment variable of a step can
// hold: Linux limits each "NAME=value" string to 128 KiB (MAX_ARG_STRLEN);
// a longer one makes the step fail to start (E2BIG) on every retry.
const maxEnvValue = 128*1024 - 64

// checkEnvSizes refuses a run whose JSON params cannot reach a step's
// environment, before a PipelineRun exists: no attempt could succeed.
func checkEnvSizes(params tektonv1.Params) error {
	for _, p := range params {
		switch p.Name {
		case taskdef.ParamResource, taskdef.ParamProviderConfig, taskdef.ParamPipelineConfig:
			if n := len(p.Value.StringVal); n > maxEnvValue {
				return fmt.Errorf("the %s passed to the provider would be %d bytes encoded, more than a step's environment variable can hold (%d): shorten the resource's parameters or env (JSON escapes characters such as < and & six-fold)",
					p.Name, n, maxEnvValue)
			}
		}
	}
	return nil
}

func operationTimeout(d time.Duration) *metav1.Duration {
	if d <= 0 {
		return nil
	}
	return &metav1.Duration{Duration: d}
}

// ownerOf names obj's controlling owner for the provider, which labels what
// it creates with it (a RunConfiguration's runs are found by its name).
func ownerOf(obj Subject) *contract.Owner {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil
	}
	return &contract.Owner{Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
}
