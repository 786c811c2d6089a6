package kfpir

import (
	"encoding/json"
	"fmt"
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// Tasks under KFP's executor protocol (Python function components, whose
// argument is the whole executor input {{$}}, and any container whose
// command needs what only run time knows: Concat, IfPresent of an optional
// input, {{$.outputs.output_file}}, artifact metadata) run their container
// through the launcher (kfp-task launch, internal/launcher): the prepare
// step installs it from Options.LauncherImage into a volume shared with
// the main step, which runs it in the component's image.
const (
	// LauncherVolume is the emptyDir shared by the prepare and main steps.
	LauncherVolume = "kfp-launcher"
	// LauncherDir is where it is mounted.
	LauncherDir = "/kfp-launcher"
	// launchedBinary is the launcher as the main step runs it.
	launchedBinary = LauncherDir + "/kfp-task"
	// launchedOutputs is the executor's output directory (parameter files,
	// executor_output.json).
	launchedOutputs = LauncherDir + "/outputs"
)

// needsLauncher says the executor's command cannot be written
// statically: it has a structured placeholder (Concat, IfPresent) or a
// {{$...}} placeholder the static form has no Tekton equivalent for
// ({{$}}, output_file, artifact metadata, task ids, times, ...).
func needsLauncher(exec *ContainerSpec) bool {
	for _, s := range append(append([]string{}, exec.Command...), exec.Args...) {
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, `{"Concat"`) || strings.HasPrefix(t, `{"IfPresent"`) {
			return true
		}
		for _, ph := range placeholderRE.FindAllString(s, -1) {
			if !staticPlaceholder(ph) {
				return true
			}
		}
	}
	return false
}

// staticPlaceholder says placeholders.one writes ph as Tekton text.
func staticPlaceholder(ph string) bool {
	switch ph {
	case "{{$.pipeline_job_name}}", "{{$.pipeline_job_uuid}}", "{{$.pipeline_task_name}}":
		return true
	}
	m := ioRE.FindStringSubmatch(ph)
	if m == nil {
		return false
	}
	dir, kind, attr := m[1], m[2], m[5]
	switch kind {
	case "parameters":
		return (dir == "inputs" && attr == "") || (dir == "outputs" && attr == "output_file")
	case "artifacts":
		return attr == "path" || attr == "uri"
	}
	return false
}

// launchedTask is what a launched task's TaskSpec needs besides its params
// and results.
type launchedTask struct {
	name, tektonName string
	spec             launcher.Spec
	// params maps each input parameter given a value to its TaskSpec param.
	params map[string]string
	// inURIs are the input artifacts' URIs; inMeta the metadata (JSON) of
	// those that have some when compiling (an importer's).
	inURIs map[string]string
	inMeta map[string]string
	// inMetaParams are the values filling the placeholders of an
	// importer's metadata, by input artifact and importer input.
	inMetaParams map[string]map[string]string
	// items are the params holding the collected outputs of an unrolled
	// loop, in order, by input; itemTypes their KFP type. rest is the
	// input collected from a run-time loop (an array param, restParam).
	items           map[string][]string
	itemTypes       map[string]string
	rest, restParam string
	restType        string
	// itemShapes say how items nest (collected over nested loops);
	// artifactItems are the params of an artifact list's items, by input;
	// restArtifact says rest is an artifact list; artifactResults name
	// the results reporting output artifacts (collected.go).
	itemShapes      map[string]string
	artifactItems   map[string][]string
	restArtifact    bool
	artifactResults map[string]string
	// oneOfArtifacts are the params of the input artifacts from dsl.OneOf,
	// each an artifact's {uri, metadata} (oneof.go).
	oneOfArtifacts map[string]string
	// artifactJSON are the params giving input artifacts as
	// {uri, metadata}: a run-time loop's artifact items (loops.go).
	artifactJSON map[string]string
	// cache: the task keeps and reuses its executions (caching.go).
	cache bool
	// results maps output parameters to TaskSpec results.
	results map[string]string
}

// launcherSpec is the launcher's view of a component: its interface (lists
// are the inputs given an artifact list) and its container's command,
// unresolved. Every placeholder in it is checked
// now against a stand-in executor input, so one the launcher cannot
// resolve is refused at compile time, not when the task runs.
func launcherSpec(task string, comp *ComponentSpec, exec *ContainerSpec, inMeta map[string]string, lists map[string]bool) (launcher.Spec, error) {
	spec := launcher.Spec{Task: task, Command: exec.Command, Args: exec.Args,
		Inputs:  launcher.Inputs{Parameters: map[string]launcher.Parameter{}, Artifacts: map[string]launcher.Artifact{}},
		Outputs: launcher.Outputs{Parameters: map[string]launcher.Parameter{}, Artifacts: map[string]launcher.Artifact{}}}
	stand := launcher.Runtime{Parameters: map[string]string{}, Artifacts: map[string]launcher.RuntimeArtifact{}, ArtifactLists: map[string][]launcher.RuntimeArtifact{},
		OutputURI: "file:///root/run/task", OutputDir: launchedOutputs}
	in, out := comp.InputDefinitions, comp.OutputDefinitions
	if in != nil {
		for key, p := range in.Parameters {
			spec.Inputs.Parameters[key] = launcher.Parameter{Type: p.ParameterType, Optional: p.IsOptional, Default: p.DefaultValue}
			stand.Parameters[key] = standIn(p.ParameterType)
		}
		for key, a := range in.Artifacts {
			spec.Inputs.Artifacts[key] = launcher.Artifact{SchemaTitle: a.ArtifactType.SchemaTitle, SchemaVersion: a.ArtifactType.SchemaVersion, Optional: a.IsOptional, List: a.IsArtifactList || lists[key]}
			stand.Artifacts[key] = launcher.RuntimeArtifact{URI: "file:///root/run/producer/" + key, Metadata: standInMetadata(inMeta[key])}
			stand.ArtifactLists[key] = []launcher.RuntimeArtifact{stand.Artifacts[key]}
		}
	}
	if out != nil {
		for key, p := range out.Parameters {
			spec.Outputs.Parameters[key] = launcher.Parameter{Type: p.ParameterType}
		}
		for key, a := range out.Artifacts {
			spec.Outputs.Artifacts[key] = launcher.Artifact{SchemaTitle: a.ArtifactType.SchemaTitle, SchemaVersion: a.ArtifactType.SchemaVersion}
		}
	}
	ei, err := launcher.ExecutorInput(spec, stand)
	if err == nil {
		_, err = launcher.Resolve(spec, ei, stand)
	}
	if err != nil {
		return spec, unsupported(task, "placeholder", "%v", err)
	}
	return spec, nil
}

// standInMetadata is an importer's metadata with its placeholders filled
// by stand-in values (importerMetadata checked it names only inputs).
func standInMetadata(meta string) json.RawMessage {
	if !strings.Contains(meta, "{{$") {
		return json.RawMessage(meta)
	}
	names, _ := launcher.MetadataInputs(json.RawMessage(meta))
	values := map[string]string{}
	for _, n := range names {
		values[n] = "x"
	}
	filled, _ := launcher.ImporterMetadata(json.RawMessage(meta), values)
	return filled
}

// standIn is a value of a KFP type, for checking placeholders.
func standIn(typ string) string {
	switch typ {
	case launcher.TypeInteger, launcher.TypeDouble:
		return "0"
	case launcher.TypeBoolean:
		return "false"
	case launcher.TypeList:
		return "[]"
	case launcher.TypeStruct, launcher.TypeTaskFinalStatus:
		return "{}"
	}
	return "x"
}

// launchSteps are the prepare and main steps of a launched task, and the
// volume they share.
func (c *compiler) launchSteps(lt launchedTask, exec *ContainerSpec) ([]tektonv1.Step, []corev1.Volume, error) {
	if c.opts.LauncherImage == "" {
		return nil, nil, fmt.Errorf("task %q runs under KFP's executor protocol: Options.LauncherImage (an image with %s) is required", lt.name, LauncherPath)
	}
	specJSON, err := json.Marshal(lt.spec)
	if err != nil {
		return nil, nil, err
	}
	// Tekton substitutes $(...) in step arguments: the component's own text
	// must not contain any.
	if err := checkLiteral(lt.name, string(specJSON)); err != nil {
		return nil, nil, err
	}
	args := []string{"launch", "--spec", string(specJSON)}
	for _, key := range sortedKeys(lt.params) {
		if strings.Contains(key, "=") {
			return nil, nil, unsupported(lt.name, "parameter name with '='", "input parameter %q", key)
		}
		args = append(args, "--param", key+"=$(params."+lt.params[key]+")")
	}
	args = append(args, lt.collectArgs()...)
	for _, key := range sortedKeys(lt.inURIs) {
		if strings.ContainsAny(key, "=:") {
			return nil, nil, unsupported(lt.name, "artifact name with '=' or ':'", "input artifact %q", key)
		}
		args = append(args, "--artifact", key+"="+lt.inURIs[key])
		if meta, ok := lt.inMeta[key]; ok {
			args = append(args, "--artifact-metadata", key+"="+meta)
		}
		for _, p := range sortedKeys(lt.inMetaParams[key]) {
			args = append(args, "--artifact-metadata-param", key+":"+p+"="+lt.inMetaParams[key][p])
		}
	}
	for _, key := range sortedKeys(lt.oneOfArtifacts) {
		args = append(args, "--artifact-json", key+"=$(params."+lt.oneOfArtifacts[key]+")")
	}
	for _, key := range sortedKeys(lt.results) {
		if strings.Contains(key, "=") {
			return nil, nil, unsupported(lt.name, "parameter name with '='", "output parameter %q", key)
		}
		args = append(args, "--result", key+"=$(results."+lt.results[key]+".path)")
	}
	args = append(args,
		"--output-uri", c.rootURI+"/$(context.pipelineRun.name)/"+lt.tektonName,
		"--output-dir", launchedOutputs,
		"--pipeline-root", c.rootURI,
		"--job-name", "$(context.pipelineRun.name)", "--job-uid", "$(context.pipelineRun.uid)",
		"--task-uid", "$(context.taskRun.uid)")
	if lt.cache {
		args = append(args, "--cache-dir", c.cacheDir(), "--caching", "$(params."+CachingParam+")",
			"--image", exec.Image, "--cached-result", "$(results."+CachedResult+".path)")
	}
	if lt.rest != "" {
		// The items of an array param each become an argument: last.
		args = append(args, "--", "$(params."+lt.restParam+"[*])")
	}
	mount := []corev1.VolumeMount{{Name: LauncherVolume, MountPath: LauncherDir}}
	prepare := tektonv1.Step{Name: PrepareStep, Image: c.opts.LauncherImage, Command: []string{LauncherPath},
		Args: []string{"install", launchedBinary}, VolumeMounts: mount}
	main := tektonv1.Step{Name: MainStep, Image: exec.Image, Command: []string{launchedBinary}, Args: args, VolumeMounts: mount}
	volumes := []corev1.Volume{{Name: LauncherVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return []tektonv1.Step{prepare, main}, volumes, nil
}
