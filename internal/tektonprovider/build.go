package tektonprovider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tektoncd/pipeline/pkg/apis/pipeline/pod"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// restrictedStep is the security context of every ML pipeline step: what
// Pod Security "restricted" demands, so pipelines run in namespaces that
// enforce it. The pipeline's images must run as a non-root user.
func restrictedStep() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func restrictedPod() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// PipelineFor compiles the IR of one pipeline version into the Tekton
// Pipeline the backend stores. launcher is an image holding the helper
// kfpir.LauncherPath (the provider's own image).
func PipelineFor(definition []byte, res contract.Resource, cfg contract.ProviderConfig, namespace, launcher string) (*tektonv1.Pipeline, error) {
	spec, err := kfpir.Parse(definition)
	if err != nil {
		return nil, err
	}
	configured, store, err := pipelineRoot(cfg)
	if err != nil {
		return nil, err
	}
	// The runs of this Pipeline are runs of its namespace: they mount only
	// that namespace's directory of the artifacts volume, at the root plus
	// the directory, so artifact URIs name the directory too.
	dir, err := NamespaceDirectory(res.Metadata.Namespace)
	if err != nil {
		return nil, err
	}
	root, err := namespacePipelineRoot(basePipelineRoot(configured, spec), dir)
	if err != nil {
		return nil, err
	}
	settings, err := SettingsFrom(cfg)
	if err != nil {
		return nil, err
	}
	id := PipelineID(res)
	p, err := kfpir.Compile(spec, kfpir.Options{
		// The namespace's directory of the artifacts claim outlives the run:
		// KFP's cache lives there (a run's own claim would not keep it).
		Caching: settings.ArtifactsClaim != "",
		// A pipeline of another namespace than the Provider's may not name
		// the Provider namespace's Secrets, ConfigMaps or PVCs.
		TenantNamespace: res.Metadata.Namespace,
		Name:            PipelineVersionName(id, res.Version),
		Namespace:       namespace,
		Labels: map[string]string{
			contract.LabelManagedBy:       contract.ManagedByTektonProvider,
			contract.LabelPipelineID:      naming.LabelValue(id),
			contract.LabelPipeline:        naming.LabelValue(res.Metadata.Name),
			contract.LabelPipelineVersion: naming.LabelValue(res.Version),
			contract.LabelNamespace:       naming.LabelValue(res.Metadata.Namespace),
		},
		Annotations: map[string]string{
			contract.AnnotationResource:           resourceRef(res),
			contract.AnnotationPipelineVersion:    res.Version,
			contract.AnnotationArtifactsDirectory: dir,
		},
		PipelineRoot:  root,
		ObjectStore:   store,
		LauncherImage: launcher,
	})
	if err != nil {
		return nil, err
	}
	// Every step, finally's included, meets Pod Security "restricted".
	for _, tasks := range [][]tektonv1.PipelineTask{p.Spec.Tasks, p.Spec.Finally} {
		for i := range tasks {
			ts := tasks[i].TaskSpec
			if ts == nil {
				continue
			}
			if ts.StepTemplate == nil {
				ts.StepTemplate = &tektonv1.StepTemplate{}
			}
			ts.StepTemplate.SecurityContext = restrictedStep()
		}
	}
	return p, nil
}

// pipelineRoot is the resolved artifact repository, when one is
// configured: a file:// root (a volume), or an s3:// root of the
// Provider's artifactRepository.s3, with how tasks reach its store.
func pipelineRoot(cfg contract.ProviderConfig) (string, *kfpir.ObjectStore, error) {
	repo := cfg.ArtifactRepository
	if repo == nil || repo.Location == "" {
		return "", nil, nil
	}
	switch {
	case strings.HasPrefix(repo.Location, "file:///"):
		return repo.Location, nil, nil
	case objectstore.Supported(repo.Location) && repo.Endpoint == "" && len(repo.Secrets) == 0:
		return "", nil, fmt.Errorf("artifact repository %q (from the %s): the Tekton provider reaches an object store with an endpoint and credentials; "+
			"configure it as an s3 artifact repository (endpoint, accessKeySecret, secretKeySecret)", repo.Location, repo.Source)
	case objectstore.Supported(repo.Location):
		store := &kfpir.ObjectStore{Endpoint: repo.Endpoint, Region: repo.Region, Insecure: repo.Insecure}
		for _, s := range repo.Secrets {
			ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key}
			switch s.Purpose {
			case "accessKey":
				store.AccessKey = ref
			case "secretKey":
				store.SecretKey = ref
			default:
				return "", nil, fmt.Errorf("artifact repository %q (from the %s): a %s Secret is not for an S3 store", repo.Location, repo.Source, s.Purpose)
			}
		}
		if (store.AccessKey == nil) != (store.SecretKey == nil) {
			// One key alone would sign nothing: say so now, not at the first fetch.
			return "", nil, fmt.Errorf("artifact repository %q (from the %s): set both accessKeySecret and secretKeySecret, or neither (anonymous)", repo.Location, repo.Source)
		}
		return repo.Location, store, nil
	}
	return "", nil, fmt.Errorf("artifact repository %q (from the %s): the Tekton provider supports file:// roots (a volume) and s3:// roots (an S3-compatible store such as AWS S3, SeaweedFS or MinIO); not %s",
		repo.Location, repo.Source, schemeOf(repo.Location))
}

// schemeOf names a URI's store for a refusal.
func schemeOf(uri string) string {
	if scheme, _, ok := strings.Cut(uri, "://"); ok {
		return scheme + "://"
	}
	return "a location without a scheme"
}

// rewrittenRE matches what the kubelet ($$, $(NAME)) or Tekton ($(…))
// would rewrite in a value that reaches a step's arguments.
var rewrittenRE = regexp.MustCompile(`\$[$(]`)

// RunParams are a run's parameters as the Pipeline's params. Every value
// must reach the pipeline's steps unchanged, so a value the kubelet or
// Tekton would rewrite is refused rather than altered; a parameter the
// pipeline does not declare, or one resolved from another resource
// (valueFrom), is refused too.
func RunParams(spec pipelinesv1beta1.RunSpec, p *tektonv1.Pipeline) (tektonv1.Params, error) {
	declared := map[string]bool{}
	for _, ps := range p.Spec.Params {
		declared[ps.Name] = true
	}
	var out tektonv1.Params
	for _, rp := range spec.Parameters {
		if rp.ValueFrom != nil {
			return nil, fmt.Errorf("parameter %q: valueFrom was not resolved (the operator resolves it for Runs, not for RunSchedules): give a value", rp.Name)
		}
		name := kfpir.ParamName(rp.Name)
		if !declared[name] {
			return nil, fmt.Errorf("parameter %q: the pipeline has no such input parameter (it has: %s)", rp.Name, declaredNames(p))
		}
		if m := rewrittenRE.FindString(rp.Value); m != "" {
			return nil, fmt.Errorf("parameter %q: the value contains %q, which the kubelet or Tekton would rewrite before the pipeline's steps see it", rp.Name, m)
		}
		out = append(out, tektonv1.Param{Name: name, Value: *tektonv1.NewStructuredValues(rp.Value)})
	}
	return out, nil
}

func declaredNames(p *tektonv1.Pipeline) string {
	var names []string
	for _, ps := range p.Spec.Params {
		names = append(names, ps.Name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// RunInputs is what a PipelineRun of a pipeline version is made from.
type RunInputs struct {
	Name string
	// Namespace is where the PipelineRun is made (the provider's).
	Namespace string
	// ResourceNamespace is the namespace of the Run or RunSchedule the run
	// is for: the run mounts only that namespace's directory of the
	// artifacts claim.
	ResourceNamespace string
	Pipeline          *tektonv1.Pipeline
	Spec              pipelinesv1beta1.RunSpec
	Labels            map[string]string
	Settings          Settings
	// Annotations name the Run or RunSchedule (resourceAnnotations).
	Annotations map[string]string
}

// PipelineRunFor builds the PipelineRun of one run.
func PipelineRunFor(in RunInputs) (*tektonv1.PipelineRun, error) {
	params, err := RunParams(in.Spec, in.Pipeline)
	if err != nil {
		return nil, err
	}
	artifactsDir, err := runArtifactsDirectory(in.ResourceNamespace, in.Pipeline)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		contract.LabelManagedBy:       contract.ManagedByTektonProvider,
		contract.LabelPipelineID:      in.Pipeline.Labels[contract.LabelPipelineID],
		contract.LabelPipeline:        in.Pipeline.Labels[contract.LabelPipeline],
		contract.LabelPipelineVersion: in.Pipeline.Labels[contract.LabelPipelineVersion],
	}
	if in.Spec.ExperimentName != "" {
		labels[contract.LabelExperiment] = naming.LabelValue(in.Spec.ExperimentName)
	}
	for k, v := range in.Labels {
		labels[k] = v
	}
	annotations := map[string]string{contract.AnnotationPipelineVersion: in.Pipeline.Annotations[contract.AnnotationPipelineVersion]}
	// Where the run's artifacts will be, for whoever reads the finished run.
	if outputs, ok := in.Pipeline.Annotations[contract.AnnotationOutputs]; ok {
		annotations[contract.AnnotationOutputs] = outputs
	}
	for k, v := range in.Annotations {
		annotations[k] = v
	}
	pr := &tektonv1.PipelineRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: tektonv1.SchemeGroupVersion.String(), Kind: "PipelineRun"},
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, Labels: labels, Annotations: annotations},
		Spec: tektonv1.PipelineRunSpec{
			PipelineRef: &tektonv1.PipelineRef{Name: in.Pipeline.Name},
			Params:      params,
			TaskRunTemplate: tektonv1.PipelineTaskRunTemplate{
				ServiceAccountName: in.Settings.PipelineServiceAccount,
				PodTemplate:        &pod.Template{SecurityContext: restrictedPod()},
			},
		},
	}
	// The pipeline's kfp-kubernetes pod settings, by task.
	if specs, ok := in.Pipeline.Annotations[contract.AnnotationTaskRunSpecs]; ok {
		if err := json.Unmarshal([]byte(specs), &pr.Spec.TaskRunSpecs); err != nil {
			return nil, fmt.Errorf("pipeline %s: annotation %s: %w", in.Pipeline.Name, contract.AnnotationTaskRunSpecs, err)
		}
	}
	if err := setResourcesFromParams(pr, in.Pipeline); err != nil {
		return nil, err
	}
	if err := setPVCAccount(pr, in.Pipeline, in.Settings); err != nil {
		return nil, err
	}
	if declaresArtifacts(in.Pipeline) {
		pr.Spec.Workspaces = []tektonv1.WorkspaceBinding{artifactsBinding(in.Settings, artifactsDir)}
	}
	return pr, nil
}

func declaresArtifacts(p *tektonv1.Pipeline) bool {
	for _, w := range p.Spec.Workspaces {
		if w.Name == kfpir.ArtifactsWorkspace {
			return true
		}
	}
	return false
}

// artifactsBinding is the volume holding the pipeline root: namespaceDir
// of the named claim (the claim outlives the run, and every namespace the
// Provider admits has its directory there, which only that namespace's
// runs mount), or a claim of the run's own, which no other run can mount
// and so needs no directory.
func artifactsBinding(s Settings, namespaceDir string) tektonv1.WorkspaceBinding {
	if s.ArtifactsClaim != "" {
		// The kubelet makes a missing directory as it mounts it, owned by
		// root with the claim root's mode: steps may write there exactly
		// when they could write the claim's root. Other namespaces are kept
		// out not by that mode but because their runs never mount it.
		return tektonv1.WorkspaceBinding{Name: kfpir.ArtifactsWorkspace, SubPath: namespaceDir,
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.ArtifactsClaim}}
	}
	claim := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: s.ArtifactsStorage}},
	}}
	if s.ArtifactsStorageClass != "" {
		claim.Spec.StorageClassName = ptr.To(s.ArtifactsStorageClass)
	}
	return tektonv1.WorkspaceBinding{Name: kfpir.ArtifactsWorkspace, VolumeClaimTemplate: claim}
}

// resourceLabels identify the resource a run was made for, and its owner.
func resourceLabels(res contract.Resource) map[string]string {
	m := res.Metadata
	labels := map[string]string{contract.LabelNamespace: naming.LabelValue(m.Namespace)}
	switch res.Kind {
	case "Run":
		labels[contract.LabelRun], labels[contract.LabelRunUID] = naming.LabelValue(m.Name), m.UID
	case "RunSchedule":
		labels[contract.LabelRunSchedule], labels[contract.LabelRunScheduleUID] = naming.LabelValue(m.Name), m.UID
	}
	if m.Owner != nil && m.Owner.Kind == "RunConfiguration" {
		labels[contract.LabelRunConfiguration] = naming.LabelValue(m.Owner.Name)
		labels[contract.LabelRunConfigurationUID] = m.Owner.UID
	}
	return labels
}

// resourceAnnotations name the resource a run was made for, and its owner,
// whole.
func resourceAnnotations(res contract.Resource) map[string]string {
	m := res.Metadata
	annotations := map[string]string{contract.AnnotationResource: resourceRef(res)}
	if m.Owner != nil && m.Owner.Kind == "RunConfiguration" {
		annotations[contract.AnnotationRunConfiguration] = m.Namespace + "/" + m.Owner.Name
	}
	return annotations
}

func resourceRef(res contract.Resource) string {
	return res.Kind + " " + res.Metadata.Namespace + "/" + res.Metadata.Name
}

// CronJobInputs is what a RunSchedule's CronJob is made from.
type CronJobInputs struct {
	Name      string
	Namespace string
	Schedule  pipelinesv1beta1.Schedule
	// Template is the PipelineRun each scheduled time creates, named by
	// the trigger after the Job.
	Template *tektonv1.PipelineRun
	// Image runs the trigger command; ServiceAccount may create
	// PipelineRuns (the Provider's own account).
	Image          string
	ServiceAccount string
	Labels         map[string]string
}

// StartingDeadline is how late a scheduled run may still start; a run
// missed by more (the control plane was down) is skipped, never back-filled.
const StartingDeadline = 5 * 60

// CronJobFor builds the CronJob of a RunSchedule.
func CronJobFor(in CronJobInputs) (*batchv1.CronJob, error) {
	schedule, tz, err := CronSchedule(in.Schedule.CronExpression)
	if err != nil {
		return nil, err
	}
	template, err := json.Marshal(in.Template)
	if err != nil {
		return nil, err
	}
	args := []string{"trigger", "--pipelinerun", contract.EncodeParam(template)}
	if t := in.Schedule.StartTime; t != nil {
		args = append(args, "--start", t.UTC().Format(timeLayout))
	}
	if t := in.Schedule.EndTime; t != nil {
		args = append(args, "--end", t.UTC().Format(timeLayout))
	}
	labels := map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider}
	for k, v := range in.Labels {
		labels[k] = v
	}
	podSpec := corev1.PodSpec{
		ServiceAccountName: in.ServiceAccount,
		RestartPolicy:      corev1.RestartPolicyOnFailure,
		SecurityContext:    restrictedPod(),
		Containers: []corev1.Container{{
			Name: "trigger", Image: in.Image, Args: args,
			Env: []corev1.EnvVar{{Name: EnvJobName, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + batchv1.JobNameLabel + "']"}}}},
			SecurityContext: restrictedStep(),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: mustQuantity("10m"), corev1.ResourceMemory: mustQuantity("32Mi")}},
		}},
	}
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, Labels: labels, Annotations: in.Template.Annotations},
		Spec: batchv1.CronJobSpec{
			Schedule:                   schedule,
			TimeZone:                   tz,
			StartingDeadlineSeconds:    ptr.To[int64](StartingDeadline),
			ConcurrencyPolicy:          batchv1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](1),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](4),
					Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
				},
			},
		},
	}, nil
}

// EnvJobName carries the trigger's Job name, which the CronJob controller
// derives from the scheduled time.
const EnvJobName = "KFP_JOB_NAME"

const timeLayout = "2006-01-02T15:04:05Z"
