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
	f, err := parseLaunchFlags(args)
	if err != nil {
		return err
	}
	spec, rt, err := launchInputs(f)
	if err != nil {
		return err
	}
	ei, argv, err := prepareExecution(spec, rt)
	if err != nil {
		return err
	}
	if f.cache.dir != "" && f.cache.enabled != "true" && f.cache.enabled != "false" {
		return fmt.Errorf("launch: --caching %q: want true or false (the run's kfp-enable-caching parameter)", f.cache.enabled)
	}
	fingerprint, entry, err := reuseCachedExecution(f.cache, spec, ei)
	if err != nil {
		return err
	}
	if entry != nil {
		reused := launcher.Results{Parameters: entry.Parameters, Artifacts: cachedArtifacts(ei, entry)}
		return writeResults(spec, reused, f.results, f.artifactResults, f.cache.cachedResult, true)
	}

	if err := runComponent(spec.Task, argv); err != nil {
		return err
	}
	if objectstore.Supported(rt.PipelineRoot) {
		shareOutputs(ei)
	}
	res, err := launcher.Collect(spec, ei, os.ReadFile)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if f.cache.active() {
		storeExecution(f.cache, cacheEntryOf(fingerprint, rt.JobName, spec.Task, res), ei)
	}
	return writeResults(spec, res, f.results, f.artifactResults, f.cache.cachedResult, false)
}

// launchFlags are launch's flags, parsed.
type launchFlags struct {
	spec                     string
	params, artifacts        namedFlags
	paramFiles               namedFlags
	artifactMeta, metaParams namedFlags
	results, artifactResults namedFlags
	itemTypes, restType      namedFlags
	items                    listFlags
	lists                    collectedFlags
	cache                    cacheFlags
	rt                       launcher.Runtime
	rest                     []string // the arguments after --
}

func parseLaunchFlags(args []string) (*launchFlags, error) {
	f := &launchFlags{params: namedFlags{}, paramFiles: namedFlags{}, artifacts: namedFlags{}, artifactMeta: namedFlags{}, metaParams: namedFlags{},
		results: namedFlags{}, artifactResults: namedFlags{}, itemTypes: namedFlags{}, restType: namedFlags{}}
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.StringVar(&f.spec, "spec", "", "the task's launcher.Spec (JSON)")
	fs.Var(f.params, "param", "NAME=TEXT: an input parameter's value; repeatable (absent: not given)")
	fs.Var(f.paramFiles, "param-file", "NAME=PATH: an input parameter's value is PATH's text (an earlier step's result); repeatable")
	fs.Var(f.artifacts, "artifact", "NAME=URI: an input artifact; repeatable")
	fs.Var(f.artifactMeta, "artifact-metadata", "NAME=JSON: an input artifact's metadata; repeatable")
	fs.Var(f.metaParams, "artifact-metadata-param", "ARTIFACT:PARAM=TEXT: fills {{$.inputs.parameters['PARAM']}} in ARTIFACT's metadata (an importer's); repeatable")
	fs.Var(f.results, "result", "NAME=PATH: where output parameter NAME's text goes (a Tekton result); repeatable")
	fs.Var(f.artifactResults, "artifact-result", "NAME=PATH: where output artifact NAME's {uri, metadata} goes; repeatable")
	fs.Var(f.itemTypes, "item-type", "NAME=TYPE: input NAME is a list of the --item values for it, each of KFP type TYPE; repeatable")
	fs.Var(&f.items, "item", "NAME=TEXT: the next item of the list input NAME (see --item-type); repeatable, in order")
	fs.Var(f.restType, "collect-rest", "NAME=TYPE: input NAME is the list of the arguments after --, each of KFP type TYPE")
	f.lists.register(fs)
	f.cache.register(fs)
	registerRuntimeFlags(fs, &f.rt)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.rest = fs.Args()
	return f, nil
}

// registerRuntimeFlags registers the flags of the run's and the task's
// runtime values, which fill KFP's placeholders.
func registerRuntimeFlags(fs *flag.FlagSet, rt *launcher.Runtime) {
	fs.StringVar(&rt.OutputURI, "output-uri", "", "URI under which the output artifacts live")
	fs.StringVar(&rt.OutputDir, "output-dir", "", "local directory for output-parameter files and the executor output")
	fs.StringVar(&rt.JobName, "job-name", "", "{{$.pipeline_job_name}}")
	fs.StringVar(&rt.JobUID, "job-uid", "", "{{$.pipeline_job_uuid}}")
	fs.StringVar(&rt.TaskUID, "task-uid", "", "{{$.pipeline_task_uuid}}")
	fs.StringVar(&rt.PipelineRoot, "pipeline-root", "", "{{$.pipeline_root}}")
	fs.StringVar(&rt.JobCreateTime, "job-create-time", "", "{{$.pipeline_job_create_time_utc}}")
}

// launchParameters are the input parameters the flags give: each --param,
// and each list collected from --item or the arguments after --.
func launchParameters(f *launchFlags) (map[string]string, error) {
	if len(f.rest) > 0 && len(f.restType) == 0 && f.lists.artifactRest == "" || len(f.restType) > 0 && f.lists.artifactRest != "" {
		return nil, fmt.Errorf("launch: unexpected arguments %q (the arguments after -- are one list: --collect-rest or --artifact-rest)", f.rest)
	}
	collected, err := collectedLists(f.itemTypes, f.items, f.restType, f.rest)
	if err == nil {
		err = nestLists(collected, f.lists.shapes)
	}
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	params := f.params
	for name, path := range f.paramFiles {
		if _, dup := collected[name]; dup {
			return nil, fmt.Errorf("launch: input %q given as a list and as --param-file", name)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("launch: input %q: %w", name, err)
		}
		collected[name] = string(data)
	}
	for name, text := range collected {
		if _, dup := params[name]; dup {
			return nil, fmt.Errorf("launch: input %q given as --param and as a list or --param-file", name)
		}
		params[name] = text
	}
	return params, nil
}

// launchInputs are the task's spec and its runtime values from the flags:
// the input parameters, and the input artifacts, checked to be in a store
// the launcher reads, with their metadata.
func launchInputs(f *launchFlags) (launcher.Spec, launcher.Runtime, error) {
	var spec launcher.Spec
	rt := f.rt
	params, err := launchParameters(f)
	if err != nil {
		return spec, rt, err
	}
	dec := json.NewDecoder(strings.NewReader(f.spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, rt, fmt.Errorf("launch: --spec is not a launcher spec: %w", err)
	}
	if !filepath.IsAbs(rt.OutputDir) {
		return spec, rt, fmt.Errorf("launch: --output-dir %q is not an absolute path", rt.OutputDir)
	}
	rt.Parameters = params
	rt.Artifacts = map[string]launcher.RuntimeArtifact{}
	for name, uri := range f.artifacts {
		if uri == "" {
			continue // an optional pipeline input artifact the run did not give: absent
		}
		rt.Artifacts[name] = launcher.RuntimeArtifact{URI: uri, Metadata: json.RawMessage(f.artifactMeta[name])}
	}
	if err := f.lists.jsonArtifacts(spec, rt.Artifacts); err != nil {
		return spec, rt, fmt.Errorf("launch: %w", err)
	}
	if rt.ArtifactLists, err = f.lists.artifactLists(spec, f.rest); err != nil {
		return spec, rt, fmt.Errorf("launch: %w", err)
	}
	for name := range f.artifactMeta {
		if _, ok := f.artifacts[name]; !ok {
			return spec, rt, fmt.Errorf("launch: --artifact-metadata %s for no --artifact", name)
		}
	}
	if err := inputArtifacts(rt, f.metaParams); err != nil {
		return spec, rt, fmt.Errorf("launch: task %q: %w", spec.Task, err)
	}
	return spec, rt, nil
}

// prepareExecution is the task's ExecutorInput and command line, with the
// directories of its outputs made.
func prepareExecution(spec launcher.Spec, rt launcher.Runtime) (*pipelinespec.ExecutorInput, []string, error) {
	ei, err := launcher.ExecutorInput(spec, rt)
	if err != nil {
		return nil, nil, fmt.Errorf("launch: %w", err)
	}
	argv, err := launcher.Resolve(spec, ei, rt)
	if err != nil {
		return nil, nil, fmt.Errorf("launch: %w", err)
	}
	if len(argv) == 0 {
		return nil, nil, fmt.Errorf("launch: task %q has no command", spec.Task)
	}
	if err := prepareArtifacts(ei); err != nil {
		return nil, nil, fmt.Errorf("launch: task %q: %w", spec.Task, err)
	}
	return ei, argv, nil
}

// reuseCachedExecution looks the execution up in the cache, when caching
// is active: its fingerprint, and on a hit the entry whose outputs it has
// restored to this task's (nil on a miss, or with caching off).
func reuseCachedExecution(cache cacheFlags, spec launcher.Spec, ei *pipelinespec.ExecutorInput) (string, *launcher.CacheEntry, error) {
	if !cache.active() {
		if cache.dir != "" {
			fmt.Printf("kfp-task: caching is off for this run: task %q runs, and its outputs are not stored\n", spec.Task)
		}
		return "", nil, nil
	}
	fingerprint, err := cache.fingerprint(spec, ei)
	if err != nil {
		return "", nil, fmt.Errorf("launch: task %q: cache fingerprint: %w", spec.Task, err)
	}
	entry, hit := cache.lookup(fingerprint)
	if !hit {
		return fingerprint, nil, nil
	}
	if err := cache.restore(entry, ei); err != nil {
		return "", nil, fmt.Errorf("launch: task %q: restoring the cached execution %s: %w", spec.Task, fingerprint, err)
	}
	fmt.Printf("kfp-task: task %q is cached: the outputs of its execution in %s are reused (fingerprint %s)\n", spec.Task, entry.JobName, fingerprint)
	return fingerprint, entry, nil
}

// runComponent runs the component's command line, on this process's
// standard streams; its own failure (a positive exit code) is an
// exitError, which the step exits with.
func runComponent(task string, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return exitError{exit.ExitCode()}
		}
		return fmt.Errorf("launch: task %q: running %s: %w", task, argv[0], err)
	}
	return nil
}

// cacheEntryOf is the cache entry of an execution's outputs.
func cacheEntryOf(fingerprint, jobName, task string, res launcher.Results) launcher.CacheEntry {
	entry := launcher.CacheEntry{Fingerprint: fingerprint, Parameters: res.Parameters, Artifacts: map[string]json.RawMessage{},
		JobName: jobName, Task: task}
	for name, a := range res.Artifacts {
		entry.Artifacts[name] = a.Metadata
	}
	return entry
}

// storeExecution stores the execution in the cache. A failure is only
// warned of: the task did its work; only later runs lose the reuse.
func storeExecution(cache cacheFlags, entry launcher.CacheEntry, ei *pipelinespec.ExecutorInput) {
	if err := cache.store(entry, ei); err != nil {
		fmt.Fprintf(os.Stderr, "kfp-task: warning: task %q: storing its execution in the cache: %v\n", entry.Task, err)
	}
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
