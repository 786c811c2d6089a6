// Package taskdef defines the shared Tasks the operator deploys once per
// workflow namespace. tasks/gen writes them to tasks/*.yaml, which the
// operator embeds; the definitions here are the source, the YAML the artifact.
package taskdef

import (
	"strconv"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Params of the shared Tasks.
const (
	ParamProviderImage  = "provider-image"
	ParamProviderConfig = "provider-config"
	ParamResource       = "resource"
	ParamHelperImage    = "helper-image"
	ParamCompilerImage  = "compiler-image"
	ParamPipelineImage  = "pipeline-image"
	ParamPipelineConfig = "pipeline-config"
)

// Results of the shared Tasks.
const (
	ResultProviderID    = "provider-id"
	ResultProviderError = "provider-error"
)

// Files of the provider contract, in the volume mounted at Dir.
const (
	Dir                = "/kfp"
	FileResource       = Dir + "/resource.json"
	FileProviderConfig = Dir + "/provider/config.json"
	FileOutput         = Dir + "/output.json"
	FilePipelineConfig = Dir + "/pipeline-config.yaml"
	FilePipeline       = Dir + "/pipeline.yaml"
	DirCompiler        = Dir + "/compiler"
	HelperBinary       = "/kfp-task"
	// HelperInVolume is the helper copied into the compile volume, so the
	// compile step can run it in the pipeline's own image (it is static).
	HelperInVolume = Dir + "/bin/kfp-task"
	// CompileDir is where the helper's steps mount the compile volume, which
	// the compiler's steps (tenant code) mount at Dir. The compiler's steps
	// never mount the provider's volume: what they see of Dir is only the
	// compile volume.
	CompileDir = "/kfp-compile"
	// ServiceAccountDir is where the kubelet mounts the pod's service account
	// token. The compiler's steps mount an empty volume there instead, so
	// tenant code cannot read the provider's token.
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// Volumes of the shared Tasks.
const (
	VolumeProvider = "kfp"         // the provider's inputs and output; never mounted by tenant code
	VolumeCompile  = "kfp-compile" // the compiler's inputs and output
	VolumeNoToken  = "no-sa-token" // an empty volume hiding the service account token
)

// inCompileDir is path (under Dir, as the compiler sees it) as the helper's
// steps see it.
func inCompileDir(path string) string { return CompileDir + path[len(Dir):] }

// Labels on every shared Task.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "kfp-tekton-operator"
	LabelKind      = "pipelines.kubeflow.org/task-kind"
	LabelOperation = "pipelines.kubeflow.org/task-operation"
)

// resultsBudget is how many bytes of a step's termination message the
// kubelet keeps in a pod of steps step containers plus Tekton's one init
// container (prepare): 12 KiB shared among the pod's containers, at most
// 4 KiB each. Tekton reads the step's results from that message.
func resultsBudget(steps int) int {
	const perPod, perContainer = 12 * 1024, 4 * 1024
	return min(perContainer, perPod/(steps+1))
}

// Operation is one thing the controllers ask a provider to do.
type Operation struct {
	Kind      string // pipeline, run, runschedule, experiment
	Operation string // create, update, delete
	// Compiles says the Task compiles the pipeline before calling the provider.
	Compiles bool
	// CallsProvider is false for an operation that only compiles (none:
	// every Task applied must be one an operation shape the controllers run uses).
	CallsProvider bool
	What          string
}

// TaskName is the name of the operation's Task.
func (o Operation) TaskName() string { return "kfp-" + o.Kind + "-" + o.Operation }

// Operations are every operation the controllers need.
var Operations = []Operation{
	{"pipeline", "create", true, true, "Compile a pipeline and create it in the provider's backend."},
	{"pipeline", "update", true, true, "Compile a pipeline and upload it as a new version in the provider's backend."},
	{"pipeline", "delete", false, true, "Delete a pipeline from the provider's backend."},
	{"run", "create", false, true, "Start a run in the provider's backend."},
	{"run", "delete", false, true, "Delete (or cancel) a run in the provider's backend."},
	{"runschedule", "create", false, true, "Create a recurring run in the provider's backend."},
	{"runschedule", "update", false, true, "Update a recurring run in the provider's backend."},
	{"runschedule", "delete", false, true, "Delete a recurring run from the provider's backend."},
	{"experiment", "create", false, true, "Create an experiment in the provider's backend."},
	{"experiment", "update", false, true, "Update an experiment in the provider's backend."},
	{"experiment", "delete", false, true, "Delete an experiment from the provider's backend."},
}

// Tasks are the shared Tasks, in Operations order.
func Tasks() []*tektonv1.Task {
	out := make([]*tektonv1.Task, len(Operations))
	for i, op := range Operations {
		out[i] = task(op)
	}
	return out
}

func stringParam(name, description string) tektonv1.ParamSpec {
	return tektonv1.ParamSpec{Name: name, Type: tektonv1.ParamTypeString, Description: description}
}

func task(op Operation) *tektonv1.Task {
	params := tektonv1.ParamSpecs{
		stringParam(ParamHelperImage, "Image holding "+HelperBinary+" (the operator's image), which writes the inputs and reports the results."),
		stringParam(ParamResource, "The resource, as JSON; written to "+FileResource+"."),
		stringParam(ParamProviderConfig, "The Provider's configuration, as JSON; written to "+FileProviderConfig+"."),
	}
	if op.CallsProvider {
		params = append(params, stringParam(ParamProviderImage, "The provider image, pinned by digest."))
	}
	files := []string{FileResource + "=KFP_RESOURCE", FileProviderConfig + "=KFP_PROVIDER_CONFIG"}
	// The compiler's configuration goes into the compile volume.
	env := []corev1.EnvVar{
		{Name: "KFP_RESOURCE", Value: "$(params." + ParamResource + ")"},
		{Name: "KFP_PROVIDER_CONFIG", Value: "$(params." + ParamProviderConfig + ")"},
	}
	if op.Compiles {
		params = append(params,
			stringParam(ParamPipelineConfig, "The compiler's pipeline configuration, as JSON; written to "+FilePipelineConfig+"."),
			stringParam(ParamCompilerImage, "The framework's compiler image, pinned by digest."),
			stringParam(ParamPipelineImage, "The pipeline's image."),
		)
		files = append(files, inCompileDir(FilePipelineConfig)+"=KFP_PIPELINE_CONFIG")
		env = append(env, corev1.EnvVar{Name: "KFP_PIPELINE_CONFIG", Value: "$(params." + ParamPipelineConfig + ")"})
	}
	writeArgs := []string{"write"}
	for _, f := range files {
		writeArgs = append(writeArgs, "--file", f)
	}
	if op.Compiles {
		writeArgs = append(writeArgs, "--install", inCompileDir(HelperInVolume))
	}
	// The provider's volume, at Dir: only the helper's and the provider's steps mount it.
	providerMount := corev1.VolumeMount{Name: VolumeProvider, MountPath: Dir}
	compileMounts := []corev1.VolumeMount{providerMount}
	if op.Compiles {
		compileMounts = append(compileMounts, corev1.VolumeMount{Name: VolumeCompile, MountPath: CompileDir})
	}
	steps := []tektonv1.Step{{
		Name:         "write-inputs",
		Image:        "$(params." + ParamHelperImage + ")",
		Command:      []string{HelperBinary},
		Args:         writeArgs,
		Env:          env,
		VolumeMounts: compileMounts,
	}}
	if op.Compiles {
		// Tenant code (the compiler and the pipeline's image) sees only the
		// compile volume, at Dir, and no service account token.
		tenantMounts := []corev1.VolumeMount{
			{Name: VolumeCompile, MountPath: Dir},
			{Name: VolumeNoToken, MountPath: ServiceAccountDir, ReadOnly: true},
		}
		steps = append(steps,
			tektonv1.Step{
				Name:         "inject-compiler",
				Image:        "$(params." + ParamCompilerImage + ")",
				Args:         []string{DirCompiler},
				VolumeMounts: tenantMounts,
			},
			tektonv1.Step{
				Name:    "compile",
				Image:   "$(params." + ParamPipelineImage + ")",
				Command: []string{HelperInVolume},
				// The Pipeline's env is set for the compiler, as its API says.
				Args: []string{"exec", "--env-from", FilePipelineConfig, "--",
					DirCompiler + "/compile.sh", "--pipeline_config", FilePipelineConfig, "--output_file", FilePipeline},
				VolumeMounts: tenantMounts,
			},
			// The helper copies the definition (a regular file, never
			// through a link) into the provider's volume, which tenant code
			// never mounts, and logs its digest.
			tektonv1.Step{
				Name:    "stage-definition",
				Image:   "$(params." + ParamHelperImage + ")",
				Command: []string{HelperBinary},
				Args:    []string{"stage", "--from", inCompileDir(FilePipeline), "--to", FilePipeline},
				VolumeMounts: []corev1.VolumeMount{providerMount,
					{Name: VolumeCompile, MountPath: CompileDir, ReadOnly: true}},
			})
	}
	results := []tektonv1.TaskResult{
		{Name: ResultProviderID, Type: tektonv1.ResultsTypeString, Description: "Identifier of the resource in the provider's backend."},
		{Name: ResultProviderError, Type: tektonv1.ResultsTypeString, Description: "Why the provider failed; empty on success."},
	}
	if op.CallsProvider {
		providerArgs := []string{op.Kind, op.Operation,
			"--provider-config", FileProviderConfig, "--resource", FileResource, "--output", FileOutput}
		if op.Compiles {
			providerArgs = append(providerArgs, "--pipeline-definition", FilePipeline)
		}
		steps = append(steps,
			tektonv1.Step{
				Name:         "provider",
				Image:        "$(params." + ParamProviderImage + ")",
				Args:         providerArgs,
				OnError:      tektonv1.Continue,
				VolumeMounts: []corev1.VolumeMount{providerMount},
			},
			tektonv1.Step{
				Name:    "report",
				Image:   "$(params." + ParamHelperImage + ")",
				Command: []string{HelperBinary},
				Args: []string{"report", "--output", FileOutput, "--exit-code", "$(steps.step-provider.exitCode.path)",
					"--id-result", "$(results." + ResultProviderID + ".path)",
					"--error-result", "$(results." + ResultProviderError + ".path)",
					"--results-budget", strconv.Itoa(resultsBudget(len(steps) + 2))},
				VolumeMounts: []corev1.VolumeMount{providerMount},
			})
	} else {
		steps = append(steps, tektonv1.Step{
			Name:    "report",
			Image:   "$(params." + ParamHelperImage + ")",
			Command: []string{HelperBinary},
			Args: []string{"report-compiled", "--pipeline-definition", FilePipeline,
				"--id-result", "$(results." + ResultProviderID + ".path)",
				"--error-result", "$(results." + ResultProviderError + ".path)",
				"--results-budget", strconv.Itoa(resultsBudget(len(steps) + 1))},
			VolumeMounts: []corev1.VolumeMount{providerMount},
		})
	}
	volumes := []corev1.Volume{{Name: VolumeProvider, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if op.Compiles {
		volumes = append(volumes,
			corev1.Volume{Name: VolumeCompile, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			corev1.Volume{Name: VolumeNoToken, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	}
	return &tektonv1.Task{
		TypeMeta: metav1.TypeMeta{APIVersion: tektonv1.SchemeGroupVersion.String(), Kind: "Task"},
		ObjectMeta: metav1.ObjectMeta{
			Name: op.TaskName(),
			Labels: map[string]string{
				LabelManagedBy: ManagedBy,
				LabelKind:      op.Kind,
				LabelOperation: op.Operation,
			},
		},
		Spec: tektonv1.TaskSpec{
			Description: op.What,
			Params:      params,
			Results:     results,
			Volumes:     volumes,
			StepTemplate: &tektonv1.StepTemplate{
				// Pod Security "restricted": no root, no privilege escalation, no capabilities.
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot:             ptr.To(true),
					RunAsUser:                ptr.To[int64](65532),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			},
			Steps: steps,
		},
	}
}

// PipelineTaskName is the name of the single task in an operation's
// pipeline shape, as `tkn` shows it.
func (o Operation) PipelineTaskName() string { return o.Kind + "-" + o.Operation }

// Shape is the pipelineSpec the operator embeds in the operation's
// PipelineRuns: one task running the operation's shared Task, every param
// passed through, its results raised to the PipelineRun.
func Shape(o Operation) *tektonv1.PipelineSpec {
	t := task(o)
	pt := tektonv1.PipelineTask{
		Name:    o.PipelineTaskName(),
		TaskRef: &tektonv1.TaskRef{Name: o.TaskName(), Kind: tektonv1.NamespacedTaskKind},
	}
	for _, p := range t.Spec.Params {
		pt.Params = append(pt.Params, tektonv1.Param{Name: p.Name, Value: *tektonv1.NewStructuredValues("$(params." + p.Name + ")")})
	}
	spec := &tektonv1.PipelineSpec{Description: o.What, Params: t.Spec.Params, Tasks: []tektonv1.PipelineTask{pt}}
	for _, r := range t.Spec.Results {
		spec.Results = append(spec.Results, tektonv1.PipelineResult{
			Name: r.Name, Type: tektonv1.ResultsTypeString, Description: r.Description,
			Value: *tektonv1.NewStructuredValues("$(tasks." + pt.Name + ".results." + r.Name + ")"),
		})
	}
	return spec
}

// Find returns the operation of kind and operation.
func Find(kind, operation string) (Operation, bool) {
	for _, o := range Operations {
		if o.Kind == kind && o.Operation == operation {
			return o, true
		}
	}
	return Operation{}, false
}
