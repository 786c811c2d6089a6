package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
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
	metaParams := namedFlags{}
	fs.Var(metaParams, "artifact-metadata-param", "ARTIFACT:PARAM=TEXT: fills {{$.inputs.parameters['PARAM']}} in ARTIFACT's metadata (an importer's); repeatable")
	fs.Var(results, "result", "NAME=PATH: where output parameter NAME's text goes (a Tekton result); repeatable")
	fs.Var(artifactResults, "artifact-result", "NAME=PATH: where output artifact NAME's {uri, metadata} goes; repeatable")
	itemTypes, restType := namedFlags{}, namedFlags{}
	var itemFlags listFlags
	fs.Var(itemTypes, "item-type", "NAME=TYPE: input NAME is a list of the --item values for it, each of KFP type TYPE; repeatable")
	fs.Var(&itemFlags, "item", "NAME=TEXT: the next item of the list input NAME (see --item-type); repeatable, in order")
	fs.Var(restType, "collect-rest", "NAME=TYPE: input NAME is the list of the arguments after --, each of KFP type TYPE")
	var lists collectedFlags
	lists.register(fs)
	var cache cacheFlags
	fs.StringVar(&cache.dir, "cache-dir", "", "the execution cache's directory (none: no caching)")
	fs.StringVar(&cache.enabled, "caching", "true", "the run's caching switch: true reuses and stores executions, false runs and stores nothing")
	fs.StringVar(&cache.image, "image", "", "the component's image, part of the cache fingerprint")
	fs.StringVar(&cache.cachedResult, "cached-result", "", "where true (outputs reused) or false goes (a Tekton result)")
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
	if fs.NArg() > 0 && len(restType) == 0 && lists.artifactRest == "" || len(restType) > 0 && lists.artifactRest != "" {
		return fmt.Errorf("launch: unexpected arguments %q (the arguments after -- are one list: --collect-rest or --artifact-rest)", fs.Args())
	}
	collected, err := collectedLists(itemTypes, itemFlags, restType, fs.Args())
	if err == nil {
		err = nestLists(collected, lists.shapes)
	}
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	for name, text := range collected {
		if _, dup := params[name]; dup {
			return fmt.Errorf("launch: input %q given as --param and as a list", name)
		}
		params[name] = text
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
		if uri == "" {
			continue // an optional pipeline input artifact the run did not give: absent
		}
		rt.Artifacts[name] = launcher.RuntimeArtifact{URI: uri, Metadata: json.RawMessage(artifactMeta[name])}
	}
	if err := lists.jsonArtifacts(spec, rt.Artifacts); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if rt.ArtifactLists, err = lists.artifactLists(spec, fs.Args()); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	for name := range artifactMeta {
		if _, ok := artifacts[name]; !ok {
			return fmt.Errorf("launch: --artifact-metadata %s for no --artifact", name)
		}
	}
	if err := inputArtifacts(rt, metaParams); err != nil {
		return fmt.Errorf("launch: task %q: %w", spec.Task, err)
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
	if cache.dir != "" && cache.enabled != "true" && cache.enabled != "false" {
		return fmt.Errorf("launch: --caching %q: want true or false (the run's kfp-enable-caching parameter)", cache.enabled)
	}
	var fingerprint string
	if cache.active() {
		if fingerprint, err = cache.fingerprint(spec, ei); err != nil {
			return fmt.Errorf("launch: task %q: cache fingerprint: %w", spec.Task, err)
		}
		if entry, hit := cache.lookup(fingerprint); hit {
			if err := cache.restore(entry, ei); err != nil {
				return fmt.Errorf("launch: task %q: restoring the cached execution %s: %w", spec.Task, fingerprint, err)
			}
			fmt.Printf("kfp-task: task %q is cached: the outputs of its execution in %s are reused (fingerprint %s)\n", spec.Task, entry.JobName, fingerprint)
			return writeResults(spec, launcher.Results{Parameters: entry.Parameters, Artifacts: cachedArtifacts(ei, entry)}, results, artifactResults, cache.cachedResult, true)
		}
	} else if cache.dir != "" {
		fmt.Printf("kfp-task: caching is off for this run: task %q runs, and its outputs are not stored\n", spec.Task)
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
	if objectstore.Supported(rt.PipelineRoot) {
		shareOutputs(ei)
	}

	res, err := launcher.Collect(spec, ei, os.ReadFile)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if cache.active() {
		entry := launcher.CacheEntry{Fingerprint: fingerprint, Parameters: res.Parameters, Artifacts: map[string]json.RawMessage{},
			JobName: rt.JobName, Task: spec.Task}
		for name, a := range res.Artifacts {
			entry.Artifacts[name] = a.Metadata
		}
		if err := cache.store(entry, ei); err != nil {
			// The task did its work; only later runs lose the reuse.
			fmt.Fprintf(os.Stderr, "kfp-task: warning: task %q: storing its execution in the cache: %v\n", spec.Task, err)
		}
	}
	return writeResults(spec, res, results, artifactResults, cache.cachedResult, false)
}

// cachedArtifacts are a cached execution's artifacts at this task's URIs.
func cachedArtifacts(ei *pipelinespec.ExecutorInput, e *launcher.CacheEntry) map[string]launcher.RuntimeArtifact {
	out := map[string]launcher.RuntimeArtifact{}
	for name, list := range ei.GetOutputs().GetArtifacts() {
		out[name] = launcher.RuntimeArtifact{URI: list.GetArtifacts()[0].GetUri(), Metadata: e.Artifacts[name]}
	}
	return out
}

// writeResults writes an execution's outputs to the task's Tekton results.
func writeResults(spec launcher.Spec, res launcher.Results, results, artifactResults namedFlags, cachedResult string, cached bool) error {
	if cachedResult != "" {
		if err := os.WriteFile(cachedResult, []byte(strconv.FormatBool(cached)), 0o644); err != nil {
			return fmt.Errorf("launch: task %q: %w", spec.Task, err)
		}
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

// inputArtifacts checks the input artifacts are in a store the launcher
// reads, before anything resolves their paths, and fills an importer's
// metadata with the values of its inputs.
func inputArtifacts(rt launcher.Runtime, metaParams namedFlags) error {
	values, err := launcher.MetadataParams(metaParams)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(rt.Artifacts)) {
		a := rt.Artifacts[name]
		if err := launcher.CheckInputStore(a.URI, rt.PipelineRoot); err != nil {
			return err
		}
		if len(a.Metadata) == 0 {
			if values[name] != nil {
				return fmt.Errorf("--artifact-metadata-param for %s, which has no --artifact-metadata", name)
			}
			continue
		}
		if a.Metadata, err = launcher.ImporterMetadata(a.Metadata, values[name]); err != nil {
			return fmt.Errorf("input artifact %q: %w", name, err)
		}
		rt.Artifacts[name] = a
	}
	return nil
}

// prepareArtifacts makes the directories the component writes into (the
// output files' and each output artifact's parent, writable by any user,
// as KFP's launcher makes them) and checks every artifact has a local
// path: on the task's volume (file:///), or in an object store (s3://,
// minio://), whose artifacts the task's fetch and store steps move.
func prepareArtifacts(ei *pipelinespec.ExecutorInput) error {
	dirs := []string{filepath.Dir(ei.GetOutputs().GetOutputFile())}
	for _, p := range ei.GetOutputs().GetParameters() {
		dirs = append(dirs, filepath.Dir(p.GetOutputFile()))
	}
	check := func(side, name string, a *pipelinespec.RuntimeArtifact) (string, error) {
		uri := a.GetUri()
		if !strings.HasPrefix(uri, "file:///") && !objectstore.Supported(uri) {
			return "", fmt.Errorf("%s artifact %q at %s: the supported stores are %s", side, name, uri, launcher.ReadableStores)
		}
		return launcher.LocalPath(uri)
	}
	for name, list := range ei.GetInputs().GetArtifacts() {
		for _, a := range list.GetArtifacts() { // an artifact list's every item
			if _, err := check("input", name, a); err != nil {
				return err
			}
		}
	}
	for name, list := range ei.GetOutputs().GetArtifacts() {
		local, err := check("output", name, list.GetArtifacts()[0])
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

// listFlags collects repeatable flags in order.
type listFlags []string

func (f *listFlags) String() string     { return strings.Join(*f, ",") }
func (f *listFlags) Set(v string) error { *f = append(*f, v); return nil }

// collectedLists are the LIST inputs built from a loop's collected
// outputs (dsl.Collected): each item's text read as its KFP type, the
// list as JSON text.
func collectedLists(itemTypes namedFlags, itemFlags listFlags, restType namedFlags, rest []string) (map[string]string, error) {
	texts := map[string][]string{}
	for name := range itemTypes {
		texts[name] = []string{}
	}
	for _, item := range itemFlags {
		name, text, ok := strings.Cut(item, "=")
		if _, declared := itemTypes[name]; !ok || !declared {
			return nil, fmt.Errorf("--item %q: want NAME=TEXT for a NAME given --item-type", item)
		}
		texts[name] = append(texts[name], text)
	}
	types := map[string]string{}
	for name, typ := range itemTypes {
		types[name] = typ
	}
	if len(restType) > 1 {
		return nil, fmt.Errorf("--collect-rest given twice")
	}
	for name, typ := range restType {
		if _, dup := texts[name]; dup {
			return nil, fmt.Errorf("input %q given as --item-type and --collect-rest", name)
		}
		texts[name], types[name] = rest, typ
	}
	out := map[string]string{}
	for name, list := range texts {
		values := make([]any, 0, len(list))
		for i, text := range list {
			v, err := launcher.Value(types[name], text)
			if err != nil {
				return nil, fmt.Errorf("input %q, item %d: %w", name, i, err)
			}
			values = append(values, v.AsInterface())
		}
		data, err := json.Marshal(values)
		if err != nil {
			return nil, err
		}
		out[name] = string(data)
	}
	return out, nil
}
