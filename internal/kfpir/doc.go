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
// Compile refuses it, naming its first executor feature.
//
// # Supported subset
//
//   - The root DAG's tasks, each a container executor (image, command, args,
//     literal env, resources as requests/limits for cpu and memory). Each
//     task becomes a PipelineTask with an embedded taskSpec; its step "main"
//     runs the container. PipelineTask.displayName is the KFP task name.
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
//   - triggerPolicy.condition of the form inputs.parameter_values['x'] == 'v'
//     or != 'v' (either operand order, single or double quotes) → a when
//     expression (in / notin) on the value the task binds to its input x.
//     A task skipped this way skips the tasks that consume its results,
//     while tasks that merely run after it still run (Tekton's when scope).
//   - root dag.outputs.parameters (valueFromParameter) → Pipeline results.
//   - cachingOptions.enableCache is accepted and has no effect: there is no
//     cache, so every task runs every time (always a correct execution).
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
// only so far: an input artifact is passed by URI without its metadata,
// and KFP's Python executor gives file:// artifacts no path, so Python
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
// network. Nothing else runs besides the executor's own container: output
// parameters are written by the component straight into the Tekton result
// file.
//
// # Limits
//
// A task's output parameter is a Tekton result: by default all results of a
// task share the container termination message, about 4096 bytes, and a
// larger value fails the task (Tekton's results-from: sidecar-logs raises
// the limit). Pass anything bigger as an artifact. The compiled Pipeline is
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
// feature and, where there is one, the KFP task: loops (parameterIterator,
// artifactIterator, iteratorPolicy, for-loop DAGs), exit handlers and exit
// tasks (triggerPolicy.strategy, taskFinalStatus), condition groups and any
// other nested DAG component (pipeline in pipeline), importers, resolvers,
// custom jobs, caching with a cacheKey, retry backoff, accelerators,
// lifecycle hooks, placeholders in env or resources, pipeline input and
// output artifacts, runtime artifacts, artifact lists (dsl.Collected),
// dsl.OneOf outputs, parameterExpressionSelector, task/component platform
// configuration, a platform spec document (kfp-kubernetes secrets, volumes,
// …), a PipelineJob runtimeConfig, non-file:// pipeline roots, condition
// syntax beyond the form above, and placeholders the launcher cannot
// resolve. Parse refuses any
// field it does not know (see Reading the IR).
//
// The KFP SDK compiles dsl.If/dsl.Condition into a condition-group DAG, so
// SDK conditions are refused as nested DAGs; triggerPolicy.condition is
// honoured on container tasks of the root DAG.
package kfpir
