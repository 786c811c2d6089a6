// Package kfpir translates a compiled Kubeflow Pipelines v2 pipeline (the
// KFP IR PipelineSpec, schemaVersion 2.x, as written by the KFP v2 SDK) into
// a Tekton v1 Pipeline. It is the pure core of the Tekton provider: no
// cluster, no I/O. Parse reads the IR (YAML or JSON, optionally followed by
// a platform-spec document, or wrapped in a PipelineJob); Compile builds the
// Pipeline, runs Tekton's own validation on it and bounds its size.
//
// # Reading the IR
//
// Parse decodes the IR with KFP's own protobuf types, package pipelinespec
// of github.com/kubeflow/pipelines/api (the version pinned in go.mod): the
// YAML becomes JSON, protojson.Unmarshal fills a pipelinespec.PipelineSpec
// (refusing unknown fields) and the deploymentSpec, a google.protobuf.Struct
// in the proto, is decoded as a pipelinespec.PipelineDeploymentConfig; a
// PipelineJob wrapper is decoded as a pipelinespec.PipelineJob. Parse then
// converts the messages into the compiler's model (PipelineSpec and the
// types of ir.go), keeping the parts Compile refuses as protobuf JSON so the
// refusal can name them. Fields of the protobuf types the model has no place
// for are refused by name when set (deprecated parameter "type",
// artifactType.schemaUri, output artifact properties, customProperties and
// metadata, runtimeValue.constantValue and runtimeParameter). Fields newer
// SDKs write that the pinned types lack are unknown to protojson; Parse
// refuses cachingOptions.cacheKey, platformConfig, taskConfigPassthroughs,
// componentConfig and runtimeArtifact as the features they are, and any
// other unknown field naming the task, component or executor that holds it.
// The platform-spec document (a pipelinespec.PlatformSpec) is kept as JSON;
// Compile applies its kfp-kubernetes settings (platform.go) and refuses
// any it does not know by name.
//
// # Supported subset
//
//   - The container tasks of the root DAG and of every DAG component it
//     uses (condition groups, exit-handler groups, loops, pipelines used as
//     components), inlined by flatten (flatten.go): each a container
//     executor (image, command, args, literal env, resources as
//     requests/limits for cpu and memory, an accelerator as a limit on its
//     extended resource, e.g. nvidia.com/gpu; a resource given by a
//     pipeline input is recorded in AnnotationResourceParams and set from
//     the run's value as the task's stepSpecs when the run is created,
//     RunResources, resourceparams.go). Each becomes a PipelineTask
//     with an embedded taskSpec; its step "main" runs the container.
//     PipelineTask.displayName is the KFP task name; the Tekton name is
//     that name, or the path of groups when two tasks share it
//     ("for-loop-2-0-square" for a loop's first iteration).
//   - Root input parameters become Pipeline params with their defaults. Every
//     KFP type (STRING, NUMBER_INTEGER, NUMBER_DOUBLE, BOOLEAN, LIST, STRUCT)
//     is a Tekton string param; the KFP type is the param's description.
//     Values are text: a string as it is, an integer without a fraction
//     ("200", also for a default written 200.0), a double in its shortest
//     form ("0.1"), a boolean as true/false, a LIST or STRUCT as compact JSON
//     with sorted object keys. Component inputs follow the same rules and
//     component defaults become taskSpec param defaults.
//   - Task inputs: componentInputParameter → $(params.<param>);
//     runtimeValue.constant → the literal text; taskOutputParameter →
//     $(tasks.<producer>.results.<key>); taskOutputArtifact → the producer's
//     artifact location (below) plus runAfter on the producer.
//   - dependentTasks → runAfter (together with the producers of artifacts;
//     Tekton orders result consumers itself, and the compiler lists their
//     producers in runAfter too).
//   - retryPolicy.maxRetryCount → retries. Backoff is accepted only when
//     backoffDuration is 0s (the SDK's default), as Tekton retries at once.
//   - Conditions (condition.go): a triggerPolicy.condition, on a group or a
//     task, guards every task inside. The form inputs.parameter_values['x']
//     == 'v' (or !=) on a STRING input is a when expression on the value;
//     any other CEL the SDK writes (int(), comparisons, in, &&, ||, the
//     negations of elif and else) is decided by a condition task (kfp-task
//     condition, internal/kfpcel) whose result "outcome" the guarded tasks
//     test. A task skipped this way skips the tasks that consume its
//     results, while tasks that merely run after it still run (Tekton's
//     when scope), as in KFP.
//   - Loops (loops.go): dsl.ParallelFor over a list known when compiling is
//     unrolled (at most 200 items; parallelismLimit as runAfter between
//     iterations), over a run-time list (a parameter, a task's output) fanned
//     out with Tekton's Matrix from an items task (kfp-task items); item
//     fields (parseJson selectors) are applied as KFP's driver does;
//     dsl.Collected outputs reach the consumer as a typed LIST, a list of
//     lists over nested unrolled loops (as KFP collects them). A run-time
//     loop over a field of a run-time loop's item runs over the (outer
//     item, inner item) pairs: its items task flattens them from the outer
//     list (kfp-task items --nest), every array aligned with the pairs, and
//     each inner task fans out over the one value it takes. A loop over
//     artifacts (iterate.go) collected from an unrolled loop is unrolled,
//     each iteration taking one producer's artifact; over those of a
//     fanned-out task it is a Matrix over the producer's gathered
//     kfp-artifact-<name> results, the launcher taking one {uri, metadata}
//     per TaskRun (--artifact-json). A DAG's tasks are inlined producers
//     first, so such a list's producer is known when its loop is.
//   - Artifact lists (collected.go): dsl.Collected artifacts of a loop
//     reach the consumer's executor input as KFP's driver gives them,
//     inputs.artifacts[name].artifacts one per iteration (flat over
//     nested loops), each with its URI and metadata: the producers run
//     under the launcher and report each artifact's {uri, metadata} as
//     the result kfp-artifact-<name>, which the consumer takes per
//     iteration of an unrolled loop or gathered from a Matrix
//     ($(tasks.x.results.kfp-artifact-<name>[*])). A fanned-out task's
//     iterations write their artifacts under their own TaskRun's name.
//   - Exit handlers: a task with the strategy ALL_UPSTREAM_TASKS_COMPLETED
//     (dsl.ExitHandler's exit task, ignore_upstream_failure) runs in
//     Tekton's finally; a dsl.PipelineTaskFinalStatus input is KFP's
//     PipelineTaskFinalStatus, its state (SUCCEEDED, FAILED, CANCELLED)
//     from Tekton's status of the group. An exit task that is a pipeline
//     runs its tasks in finally, if they are independent; Tekton's finally
//     tasks run in parallel, with no runAfter and no results of each other
//     (TEP-0004), so when they depend on each other (runAfter, data,
//     conditions) one finally task runs them as its steps in dependency
//     order, each with onError: continue, after the success markers of
//     the tasks it depends on, and a check step per task fails it when a
//     task that was to run failed (exitpipeline.go).
//   - Importers (importer.go): no pod; the URI (any scheme: KFP's importer
//     does not read the store) and the metadata are recorded, and the
//     consumers get them (a file:/// URI under the pipeline root as a
//     path, any other through the launcher, which refuses a store it
//     cannot read by name, launcher.CheckInputStore). Metadata
//     placeholders of the importer's inputs are filled by the consumer's
//     launcher (--artifact-metadata-param), which runs after the tasks
//     producing them.
//   - dsl.OneOf outputs (oneof.go): a task taking a result of a task its
//     when expressions skipped is skipped too (Tekton), so the branches'
//     values cannot reach the consumer as results. Each branch's producer
//     publishes its value on the artifacts volume (a last step, kfp-task
//     oneof publish) and a selector task, after every branch by runAfter
//     (run whether they ran or were skipped) and guarded by the group's
//     conditions, gives the one value published as its result "value"
//     (kfp-task oneof select), failing if none or several were. An
//     artifact from dsl.OneOf goes the same way as its {uri, metadata}:
//     the branches' producers run under the launcher, which reports it
//     (--artifact-result), and publish that; consumers, launched, take
//     the selector's result whole (--artifact-json); a pipeline output
//     artifact from dsl.OneOf is the selector's result as a Pipeline
//     result. With an object-store root (no shared volume) dsl.OneOf is
//     refused.
//   - f-string constants ({{$.inputs.parameters['pipelinechannel--x']}} in
//     a constant) are filled with the input they name.
//   - root dag.outputs.parameters (valueFromParameter, through groups) →
//     Pipeline results; one collected from a loop is an array result (the
//     values as text; over nested loops each item the JSON of an inner
//     list).
//   - kfp-kubernetes settings (platform.go): Secrets, ConfigMaps and PVCs
//     (by name or from a parameter), field paths, empty dirs, shared
//     memory, generic ephemeral volumes, pull policy and timeout on the
//     task; node selector, tolerations, node and pod affinity, pod
//     metadata and image pull secrets as AnnotationTaskRunSpecs.
//     CreatePVC and DeletePVC (pvc.go) are kfp-task pvc tasks listed in
//     contract.AnnotationPVCTasks, for the account that may manage claims.
//   - cachingOptions.enableCache: KFP's caching (caching.go) when
//     Options.Caching says the artifacts volume outlives the run;
//     otherwise the tasks run every time and AnnotationCaching says so.
//
// # Placeholders
//
// In command and args:
//
//	{{$.inputs.parameters['x']}}              $(params.x)
//	{{$.outputs.parameters['y'].output_file}} $(results.y.path)
//	{{$.inputs.artifacts['a'].path}}          the producer's artifact path
//	{{$.inputs.artifacts['a'].uri}}           the producer's artifact URI
//	{{$.outputs.artifacts['a'].path}}         $(workspaces.artifacts.path)/$(context.pipelineRun.name)/<task>/<a>
//	{{$.outputs.artifacts['a'].uri}}          <pipeline root>/$(context.pipelineRun.name)/<task>/<a>
//	{{$.pipeline_job_name}}                   $(context.pipelineRun.name)
//	{{$.pipeline_job_uuid}}                   $(context.pipelineRun.uid)
//	{{$.pipeline_task_name}}                  the KFP task name
//
// (names as sanitised below). Literal text that Tekton would itself take
// for a variable ($(params.…, $(tasks.…, $(context.…, …) is refused, since
// Tekton would substitute it.
//
// # The executor protocol (launched tasks)
//
// A task whose command or arguments need what only run time knows — the
// executor input {{$}} of Python function components, a Concat or
// IfPresent, {{$.outputs.output_file}}, artifact metadata, the task's uid
// — runs under KFP's executor protocol instead: its "prepare" step (in
// Options.LauncherImage) runs `kfp-task install /kfp-launcher/kfp-task`
// into an emptyDir shared with the main step, and the main step runs, in
// the component's image, `/kfp-launcher/kfp-task launch --spec JSON
// --param NAME=$(params.…) … --result NAME=$(results.….path) …`: the
// launcher (internal/launcher) builds the ExecutorInput as KFP does,
// resolves every placeholder, runs the command, and writes the outputs
// (executor_output.json or the parameter files) as the task's results.
// An optional input with no value is absent from the executor input and
// gets no param; a default is applied by the launcher. Placeholders are
// checked at compile time against a stand-in executor input, so one the
// launcher cannot resolve (json_escape, the job's create or schedule
// time) is refused by name. Artifacts under the launcher are file://
// only so far: an input artifact is passed by URI without its metadata
// (but an artifact list's items with theirs), and KFP's Python executor gives file:// artifacts no path, so Python
// components with artifacts need an object-store root, not yet supported.
//
// # Artifacts and the pipeline root
//
// Only file:// roots are supported (Options.PipelineRoot, else the IR's
// defaultPipelineRoot if it is file://, else DefaultPipelineRoot): the
// Pipeline declares the workspace "artifacts" (ArtifactsWorkspace) and every
// task mounts it at the root's path, so an artifact's path and its file://
// URI name the same file. A PipelineRun must bind the workspace (a PVC shared
// by the run's tasks). An output artifact lives at
// <root>/<PipelineRun name>/<Tekton task name>/<artifact name>.
//
// # Glue: the launcher contract
//
// KFP components expect the directory of their output artifacts to exist.
// A task with output artifacts therefore gets a first step, "prepare", in
// Options.LauncherImage, which must contain the helper binary
// /kfp/bin/kfp-task (LauncherPath). The step runs
//
//	/kfp/bin/kfp-task mkdir DIR
//
// where DIR is the task's artifact directory
// ($(workspaces.artifacts.path)/$(context.pipelineRun.name)/<task>). The
// helper must create DIR and its parents, writable by any user (a main step
// may run as another user than the helper), succeed if DIR exists, and exit
// non-zero with a message on stderr otherwise. It needs no shell and no
// network. Besides the executor's own container only a branch of a
// dsl.OneOf runs a last step (kfp-task oneof publish): output parameters
// are written by the component straight into the Tekton result file.
//
// # Limits
//
// A task's output parameter is a Tekton result: by default all results of a
// task share the container termination message, about 4096 bytes, and a
// larger value fails the task (Tekton's results-from: sidecar-logs raises
// the limit). Pass anything bigger as an artifact. An artifact taken in an
// artifact list or from dsl.OneOf is reported the same way, its metadata included. The compiled Pipeline is
// refused when its JSON exceeds Options.MaxBytes (DefaultMaxBytes, 1 MiB;
// etcd's object limit is 1.5 MiB).
//
// # Names
//
// Tekton's rules: task names are DNS-1123 labels (at most 63 characters),
// param names match [a-zA-Z_][a-zA-Z0-9_-]*, result and artifact directory
// names match [A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])? (dots are avoided).
// A KFP name that obeys the rule is kept; any other becomes its sanitised
// form plus "-" and the first 8 hex digits of the SHA-256 of the original
// name. The mapping depends only on the name, so it is deterministic, and
// two different names never map to the same Tekton name (a remaining clash
// is an error).
//
// # Refused
//
// Everything else in the IR is refused with an *UnsupportedError naming the
// feature and, where there is one, the KFP task: loops over a pipeline
// input artifact list or (with an object-store root) over a run-time one,
// a loop over a run-time list inside another other than over a field of
// its item (a cross product, a third level) or with a parallelismLimit, a
// task of such an inner loop taking two item values (Tekton's Matrix would
// cross them), a condition on a run-time loop's item,
// data passed between the tasks of a loop over a run-time list, collected
// outputs of a loop over a run-time list nested in another loop, output
// artifact lists (List[Artifact] outputs), pipeline output artifacts
// collected from a loop over a run-time list, pipeline outputs of strings
// collected from nested loops, an exit task that is a pipeline whose tasks
// depend on each other, resolvers,
// custom jobs, caching with a cacheKey, retry backoff, accelerator types
// that are not extended resource names (KFP uses the type as the
// resource's name), lifecycle hooks, placeholders in env, resources from
// a task's output or from a placeholder with text around it, pipeline input
// and output artifacts, runtime artifacts, dsl.OneOf outputs inside a loop
// over a run-time list, of exit tasks, of importers or with an
// object-store pipeline root, task and
// component platform configuration, the kfp-kubernetes settings
// platform.go names, a PipelineJob runtimeConfig,
// non-file:// pipeline roots, and placeholders the launcher cannot
// resolve. Parse refuses any field it does not know (see Reading the IR).
package kfpir
