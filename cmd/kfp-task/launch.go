package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// exitError carries the executor's exit code out of launch, so the step
// fails as the component did.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("the component exited with code %d", e.code) }

// namedFlags collects repeatable NAME=VALUE flags.
type namedFlags map[string]string

func (f namedFlags) String() string { return fmt.Sprint(map[string]string(f)) }
func (f namedFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not NAME=VALUE", v)
	}
	if _, dup := f[name]; dup {
		return fmt.Errorf("%q given twice", name)
	}
	f[name] = value
	return nil
}

// launch runs a KFP component's container under the executor protocol
// (internal/launcher): it builds the task's ExecutorInput from --spec and
// the values the run gives (--param, --artifact), resolves the command's
// placeholders, runs it, and writes what it produced to the Tekton
// results named by --result (output parameters, as text) and
// --artifact-result (output artifacts: {"uri", "metadata"} JSON).
//
// Artifacts live on the task's volume: file:/// URIs only for now; any
// other scheme is refused by name rather than left unfetched.
func launch(args []string) error {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	specJSON := fs.String("spec", "", "the task's launcher.Spec (JSON)")
	params, artifacts, artifactMeta := namedFlags{}, namedFlags{}, namedFlags{}
	results, artifactResults := namedFlags{}, namedFlags{}
	fs.Var(params, "param", "NAME=TEXT: an input parameter's value; repeatable (absent: not given)")
	fs.Var(artifacts, "artifact", "NAME=URI: an input artifact; repeatable")
	fs.Var(artifactMeta, "artifact-metadata", "NAME=JSON: an input artifact's metadata; repeatable")
	fs.Var(results, "result", "NAME=PATH: where output parameter NAME's text goes (a Tekton result); repeatable")
	fs.Var(artifactResults, "artifact-result", "NAME=PATH: where output artifact NAME's {uri, metadata} goes; repeatable")
	var rt launcher.Runtime
	fs.StringVar(&rt.OutputURI, "output-uri", "", "URI under which the output artifacts live")
	fs.StringVar(&rt.OutputDir, "output-dir", "", "local directory for output-parameter files and the executor output")
	fs.StringVar(&rt.JobName, "job-name", "", "{{$.pipeline_job_name}}")
	fs.StringVar(&rt.JobUID, "job-uid", "", "{{$.pipeline_job_uuid}}")
	fs.StringVar(&rt.TaskUID, "task-uid", "", "{{$.pipeline_task_uuid}}")
	fs.StringVar(&rt.PipelineRoot, "pipeline-root", "", "{{$.pipeline_root}}")
	fs.StringVar(&rt.JobCreateTime, "job-create-time", "", "{{$.pipeline_job_create_time_utc}}")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("launch: unexpected arguments %q", fs.Args())
	}
	var spec launcher.Spec
	dec := json.NewDecoder(strings.NewReader(*specJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("launch: --spec is not a launcher spec: %w", err)
	}
	if !filepath.IsAbs(rt.OutputDir) {
		return fmt.Errorf("launch: --output-dir %q is not an absolute path", rt.OutputDir)
	}
	rt.Parameters = params
	rt.Artifacts = map[string]launcher.RuntimeArtifact{}
	for name, uri := range artifacts {
		rt.Artifacts[name] = launcher.RuntimeArtifact{URI: uri, Metadata: json.RawMessage(artifactMeta[name])}
	}
	for name := range artifactMeta {
		if _, ok := artifacts[name]; !ok {
			return fmt.Errorf("launch: --artifact-metadata %s for no --artifact", name)
		}
	}

	ei, err := launcher.ExecutorInput(spec, rt)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	argv, err := launcher.Resolve(spec, ei, rt)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if len(argv) == 0 {
		return fmt.Errorf("launch: task %q has no command", spec.Task)
	}
	if err := prepareArtifacts(ei); err != nil {
		return fmt.Errorf("launch: task %q: %w", spec.Task, err)
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return exitError{exit.ExitCode()}
		}
		return fmt.Errorf("launch: task %q: running %s: %w", spec.Task, argv[0], err)
	}

	res, err := launcher.Collect(spec, ei, os.ReadFile)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	for name, file := range results {
		text, ok := res.Parameters[name]
		if !ok {
			return fmt.Errorf("launch: task %q: --result %s names no output parameter", spec.Task, name)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return fmt.Errorf("launch: task %q: output parameter %q: %w", spec.Task, name, err)
		}
	}
	for name, file := range artifactResults {
		a, ok := res.Artifacts[name]
		if !ok {
			return fmt.Errorf("launch: task %q: --artifact-result %s names no output artifact", spec.Task, name)
		}
		data, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return fmt.Errorf("launch: task %q: output artifact %q: %w", spec.Task, name, err)
		}
	}
	return nil
}

// prepareArtifacts makes the directories the component writes into (the
// output files' and each output artifact's parent, writable by any user,
// as KFP's launcher makes them) and checks every artifact is on the task's
// volume (file:///): an object store's would have to be fetched and
// stored, which the launcher does not do yet.
func prepareArtifacts(ei *pipelinespec.ExecutorInput) error {
	dirs := []string{filepath.Dir(ei.GetOutputs().GetOutputFile())}
	for _, p := range ei.GetOutputs().GetParameters() {
		dirs = append(dirs, filepath.Dir(p.GetOutputFile()))
	}
	check := func(side, name string, list *pipelinespec.ArtifactList) (string, error) {
		uri := list.GetArtifacts()[0].GetUri()
		if !strings.HasPrefix(uri, "file:///") {
			return "", fmt.Errorf("%s artifact %q at %s: only file:/// artifacts are supported by the launcher yet", side, name, uri)
		}
		return launcher.LocalPath(uri)
	}
	for name, list := range ei.GetInputs().GetArtifacts() {
		if _, err := check("input", name, list); err != nil {
			return err
		}
	}
	for name, list := range ei.GetOutputs().GetArtifacts() {
		local, err := check("output", name, list)
		if err != nil {
			return err
		}
		dirs = append(dirs, filepath.Dir(local))
	}
	for _, dir := range dirs {
		if err := mkdirAll(filepath.Clean(dir)); err != nil {
			return err
		}
	}
	return nil
}
