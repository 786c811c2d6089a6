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

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
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
	// ParamDefinitionDigest is the digest the compile Task's seal step
	// reported for the definition it left in the definition workspace.
	ParamDefinitionDigest = "definition-digest"
)

// Results of the shared Tasks.
const (
	ResultProviderID    = "provider-id"
	ResultProviderError = "provider-error"
	// ResultDefinitionDigest is the compile Task's "sha256:<hex>" of the
	// definition it sealed.
	ResultDefinitionDigest = "definition-digest"
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
	// ServiceAccountDir is where the kubelet mounts a pod's service account
	// token. The compile pod runs with no token at all; its tenant steps
	// also mount an empty volume there, so a token could not appear even
	// if the pod template were changed.
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// The compile Task: tenant code (the framework's compiler and the
// pipeline's image) runs in a pod of its own, under CompilerServiceAccount,
// with no service account token and no rights. It hands the definition to
// the provider's pod through the definition workspace, with its digest as a
// result the provider's pod checks.
const (
	CompileTaskName = "kfp-pipeline-compile"
	// CompilePipelineTask is the compile task's name in a compiling
	// operation's pipeline shape.
	CompilePipelineTask = "compile"
	// CompilerServiceAccount is the account the compile pod runs as: the
	// operator creates it beside the shared Tasks, with no role bindings and
	// token automounting off.
	CompilerServiceAccount = "kfp-tekton-compiler"
	WorkspaceDefinition    = "definition"
	// DefinitionFile is the definition's name in the definition workspace.
	DefinitionFile = "pipeline.yaml"
)

// Volumes of the shared Tasks.
const (
	VolumeProvider = "kfp"         // the provider's inputs and output, at Dir
	VolumeCompile  = "kfp-compile" // the compiler's inputs and output, at Dir in the compile pod
	VolumeNoToken  = "no-sa-token" // an empty volume hiding the service account token path
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
	Kind      contract.Kind
	Operation contract.Operation
	// Compiles says the operation's pipeline runs the compile Task first
	// and hands its definition to the provider.
	Compiles bool
	What     string
}

// TaskName is the name of the operation's Task.
func (o Operation) TaskName() string { return "kfp-" + string(o.Kind) + "-" + string(o.Operation) }

// Operations are every operation the controllers need.
var Operations = []Operation{
	{contract.KindPipeline, contract.OperationCreate, true, "Compile a pipeline and create it in the provider's backend."},
	{contract.KindPipeline, contract.OperationUpdate, true, "Compile a pipeline and upload it as a new version in the provider's backend."},
	{contract.KindPipeline, contract.OperationDelete, false, "Delete a pipeline from the provider's backend."},
	{contract.KindRun, contract.OperationCreate, false, "Start a run in the provider's backend."},
	{contract.KindRun, contract.OperationDelete, false, "Delete (or cancel) a run in the provider's backend."},
	{contract.KindRunSchedule, contract.OperationCreate, false, "Create a recurring run in the provider's backend."},
	{contract.KindRunSchedule, contract.OperationUpdate, false, "Update a recurring run in the provider's backend."},
	{contract.KindRunSchedule, contract.OperationDelete, false, "Delete a recurring run from the provider's backend."},
	{contract.KindExperiment, contract.OperationCreate, false, "Create an experiment in the provider's backend."},
	{contract.KindExperiment, contract.OperationUpdate, false, "Update an experiment in the provider's backend."},
	{contract.KindExperiment, contract.OperationDelete, false, "Delete an experiment from the provider's backend."},
}

// Tasks are the shared Tasks: the operations' in Operations order, then
// the compile Task.
func Tasks() []*tektonv1.Task {
	out := make([]*tektonv1.Task, 0, len(Operations)+1)
	for _, op := range Operations {
		out = append(out, operationTask(op))
	}
	return append(out, compileTask())
}

func stringParam(name, description string) tektonv1.ParamSpec {
	return tektonv1.ParamSpec{Name: name, Type: tektonv1.ParamTypeString, Description: description}
}

func helperStep(name string, args []string, mounts ...corev1.VolumeMount) tektonv1.Step {
	return tektonv1.Step{Name: name, Image: "$(params." + ParamHelperImage + ")", Command: []string{HelperBinary}, Args: args, VolumeMounts: mounts}
}

func definitionPath() string {
	return "$(workspaces." + WorkspaceDefinition + ".path)/" + DefinitionFile
}

// operationTask is the Task calling the provider for op. A compiling
// operation's Task receives the compiled definition in the definition
// workspace and checks it against the compile Task's digest: no tenant code
// runs in its pod.
func operationTask(op Operation) *tektonv1.Task {
	params := tektonv1.ParamSpecs{
		stringParam(ParamHelperImage, "Image holding "+HelperBinary+" (the operator's image), which writes the inputs and reports the results."),
		stringParam(ParamResource, "The resource, as JSON; written to "+FileResource+"."),
		stringParam(ParamProviderConfig, "The Provider's configuration, as JSON; written to "+FileProviderConfig+"."),
		stringParam(ParamProviderImage, "The provider image, pinned by digest."),
	}
	providerMount := corev1.VolumeMount{Name: VolumeProvider, MountPath: Dir}
	steps := []tektonv1.Step{helperStep("write-inputs",
		[]string{"write", "--file", FileResource + "=KFP_RESOURCE", "--file", FileProviderConfig + "=KFP_PROVIDER_CONFIG"},
		providerMount)}
	steps[0].Env = []corev1.EnvVar{
		{Name: "KFP_RESOURCE", Value: "$(params." + ParamResource + ")"},
		{Name: "KFP_PROVIDER_CONFIG", Value: "$(params." + ParamProviderConfig + ")"},
	}
	var workspaces []tektonv1.WorkspaceDeclaration
	providerArgs := []string{string(op.Kind), string(op.Operation),
		"--provider-config", FileProviderConfig, "--resource", FileResource, "--output", FileOutput}
	if op.Compiles {
		params = append(params, stringParam(ParamDefinitionDigest, "The compile Task's digest of the definition in the "+WorkspaceDefinition+" workspace."))
		workspaces = []tektonv1.WorkspaceDeclaration{{Name: WorkspaceDefinition, ReadOnly: true,
			Description: "Holds " + DefinitionFile + ", the definition the compile Task sealed."}}
		// The helper copies the definition (a regular file, never through a
		// link) into the provider's volume, refusing it unless its digest is
		// the one the compile Task reported.
		steps = append(steps, helperStep("stage-definition",
			[]string{"stage", "--from", definitionPath(), "--to", FilePipeline, "--digest", "$(params." + ParamDefinitionDigest + ")"},
			providerMount))
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
		helperStep("report", []string{"report", "--output", FileOutput, "--exit-code", "$(steps.step-provider.exitCode.path)",
			"--id-result", "$(results." + ResultProviderID + ".path)",
			"--error-result", "$(results." + ResultProviderError + ".path)",
			"--results-budget", strconv.Itoa(resultsBudget(len(steps) + 2))},
			providerMount))
	return &tektonv1.Task{
		TypeMeta:   metav1.TypeMeta{APIVersion: tektonv1.SchemeGroupVersion.String(), Kind: "Task"},
		ObjectMeta: callsProvider(taskMeta(op.TaskName(), op.Kind, op.Operation)),
		Spec: tektonv1.TaskSpec{
			Description: op.What,
			Params:      params,
			Workspaces:  workspaces,
			Results: []tektonv1.TaskResult{
				{Name: ResultProviderID, Type: tektonv1.ResultsTypeString, Description: "Identifier of the resource in the provider's backend."},
				{Name: ResultProviderError, Type: tektonv1.ResultsTypeString, Description: "Why the provider failed; empty on success."},
			},
			Volumes:      []corev1.Volume{{Name: VolumeProvider, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			StepTemplate: restricted(),
			Steps:        steps,
		},
	}
}

// compileTask runs tenant code: the framework's compiler and the pipeline's
// image. Its pod holds nothing of the provider's (no inputs, no token), and
// the helper's last step seals what the compiler wrote into the definition
// workspace and reports its digest. Tenant steps mount the workspace too (a
// Task cannot keep a workspace from some of its steps without a beta
// feature), so the seal step replaces whatever is at the definition's path.
func compileTask() *tektonv1.Task {
	compileMount := corev1.VolumeMount{Name: VolumeCompile, MountPath: Dir}
	tenantMounts := []corev1.VolumeMount{compileMount, {Name: VolumeNoToken, MountPath: ServiceAccountDir, ReadOnly: true}}
	write := helperStep("write-inputs",
		[]string{"write", "--file", FilePipelineConfig + "=KFP_PIPELINE_CONFIG", "--install", HelperInVolume}, compileMount)
	write.Env = []corev1.EnvVar{{Name: "KFP_PIPELINE_CONFIG", Value: "$(params." + ParamPipelineConfig + ")"}}
	steps := []tektonv1.Step{
		write,
		{
			Name:         "inject-compiler",
			Image:        "$(params." + ParamCompilerImage + ")",
			Args:         []string{DirCompiler},
			VolumeMounts: tenantMounts,
		},
		{
			Name:    "compile",
			Image:   "$(params." + ParamPipelineImage + ")",
			Command: []string{HelperInVolume},
			// The Pipeline's env is set for the compiler, as its API says.
			Args: []string{"exec", "--env-from", FilePipelineConfig, "--",
				DirCompiler + "/compile.sh", "--pipeline_config", FilePipelineConfig, "--output_file", FilePipeline},
			VolumeMounts: tenantMounts,
		},
		helperStep("seal", []string{"stage", "--from", FilePipeline, "--to", definitionPath(), "--replace",
			"--digest-result", "$(results." + ResultDefinitionDigest + ".path)"}, compileMount),
	}
	return &tektonv1.Task{
		TypeMeta:   metav1.TypeMeta{APIVersion: tektonv1.SchemeGroupVersion.String(), Kind: "Task"},
		ObjectMeta: taskMeta(CompileTaskName, contract.KindPipeline, contract.OperationCompile),
		Spec: tektonv1.TaskSpec{
			Description: "Compile a pipeline with its framework's compiler, in the pipeline's image, with no service account token; hand the definition on in the " + WorkspaceDefinition + " workspace.",
			Params: tektonv1.ParamSpecs{
				stringParam(ParamHelperImage, "Image holding "+HelperBinary+" (the operator's image), which writes the inputs and seals the output."),
				stringParam(ParamPipelineConfig, "The compiler's pipeline configuration, as JSON; written to "+FilePipelineConfig+"."),
				stringParam(ParamCompilerImage, "The framework's compiler image, pinned by digest."),
				stringParam(ParamPipelineImage, "The pipeline's image."),
			},
			Workspaces: []tektonv1.WorkspaceDeclaration{{Name: WorkspaceDefinition,
				Description: "Receives " + DefinitionFile + ", the compiled definition."}},
			Results: []tektonv1.TaskResult{{Name: ResultDefinitionDigest, Type: tektonv1.ResultsTypeString,
				Description: "sha256:<hex> of the definition sealed in the " + WorkspaceDefinition + " workspace."}},
			Volumes: []corev1.Volume{
				{Name: VolumeCompile, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: VolumeNoToken, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			},
			StepTemplate: restricted(),
			Steps:        steps,
		},
	}
}

func taskMeta(name string, kind contract.Kind, operation contract.Operation) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{
		contract.LabelManagedBy:     contract.ManagedByOperator,
		contract.LabelTaskKind:      string(kind),
		contract.LabelTaskOperation: string(operation),
	}}
}

func callsProvider(meta metav1.ObjectMeta) metav1.ObjectMeta {
	meta.Labels[contract.LabelCallsProvider] = "true"
	return meta
}

// ProviderCallers selects the pods of the Tasks that call the provider.
// Not by LabelManagedBy: Tekton sets it to tekton-pipelines on every pod it
// makes (seen on the real node), so a selector on ours matches no pod.
func ProviderCallers() map[string]string {
	return map[string]string{contract.LabelCallsProvider: "true"}
}

// StepUser is the user every step runs as (the images' "nonroot").
const StepUser int64 = 65532

// restricted is every step's security context: Pod Security "restricted"
// (no root, no privilege escalation, no capabilities).
func restricted() *tektonv1.StepTemplate {
	return &tektonv1.StepTemplate{SecurityContext: &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To(StepUser),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}}
}

// PipelineTaskName is the name of the task calling the provider in an
// operation's pipeline shape, as `tkn` shows it.
func (o Operation) PipelineTaskName() string { return string(o.Kind) + "-" + string(o.Operation) }

// Shape is the pipelineSpec the operator embeds in the operation's
// PipelineRuns: the task running the operation's shared Task, its results
// raised to the PipelineRun. A compiling operation's shape runs the compile
// Task first and binds both to the definition workspace; the run binds that
// workspace to a volume and runs the compile task under
// CompilerServiceAccount with no token.
func Shape(o Operation) *tektonv1.PipelineSpec {
	t := operationTask(o)
	pt := tektonv1.PipelineTask{
		Name:    o.PipelineTaskName(),
		TaskRef: &tektonv1.TaskRef{Name: o.TaskName(), Kind: tektonv1.NamespacedTaskKind},
	}
	spec := &tektonv1.PipelineSpec{Description: o.What}
	declared := map[string]bool{}
	declare := func(p tektonv1.ParamSpec) {
		if !declared[p.Name] {
			declared[p.Name] = true
			spec.Params = append(spec.Params, p)
		}
	}
	passThrough := func(task *tektonv1.PipelineTask, specs tektonv1.ParamSpecs) {
		for _, p := range specs {
			value := "$(params." + p.Name + ")"
			if p.Name == ParamDefinitionDigest {
				value = "$(tasks." + CompilePipelineTask + ".results." + ResultDefinitionDigest + ")"
			} else {
				declare(p)
			}
			task.Params = append(task.Params, tektonv1.Param{Name: p.Name, Value: *tektonv1.NewStructuredValues(value)})
		}
	}
	passThrough(&pt, t.Spec.Params)
	if o.Compiles {
		compile := tektonv1.PipelineTask{
			Name:       CompilePipelineTask,
			TaskRef:    &tektonv1.TaskRef{Name: CompileTaskName, Kind: tektonv1.NamespacedTaskKind},
			Workspaces: []tektonv1.WorkspacePipelineTaskBinding{{Name: WorkspaceDefinition, Workspace: WorkspaceDefinition}},
		}
		passThrough(&compile, compileTask().Spec.Params)
		pt.Workspaces = []tektonv1.WorkspacePipelineTaskBinding{{Name: WorkspaceDefinition, Workspace: WorkspaceDefinition}}
		spec.Workspaces = []tektonv1.PipelineWorkspaceDeclaration{{Name: WorkspaceDefinition,
			Description: "Carries the compiled definition from the compile task to the provider's."}}
		spec.Tasks = append(spec.Tasks, compile)
	}
	spec.Tasks = append(spec.Tasks, pt)
	for _, r := range t.Spec.Results {
		spec.Results = append(spec.Results, tektonv1.PipelineResult{
			Name: r.Name, Type: tektonv1.ResultsTypeString, Description: r.Description,
			Value: *tektonv1.NewStructuredValues("$(tasks." + pt.Name + ".results." + r.Name + ")"),
		})
	}
	return spec
}

// Find returns the operation of kind and operation.
func Find(kind contract.Kind, operation contract.Operation) (Operation, bool) {
	for _, o := range Operations {
		if o.Kind == kind && o.Operation == operation {
			return o, true
		}
	}
	return Operation{}, false
}
