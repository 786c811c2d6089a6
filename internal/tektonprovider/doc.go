// Package tektonprovider is the project's own backend, the Tekton provider
// (DESIGN §10): ML pipelines run as Tekton PipelineRuns, with no KFP or Argo
// installed. It implements the provider contract of tasks/README.md:
//
//   - pipeline create|update compiles the KFP v2 IR (internal/kfpir) into a
//     Tekton Pipeline per pipeline version; the backend id is the pipeline's
//     stable identity, and the Pipeline of a version is named after the id
//     and the version. pipeline delete removes every version.
//   - run create makes a PipelineRun of the Run's pipeline version, named
//     after the Run's UID (a retried create finds it); run delete cancels
//     it, then deletes it.
//   - runschedule create|update|delete manages a CronJob whose Job runs this
//     binary's trigger command, which creates the PipelineRun named after
//     the Job, i.e. after the scheduled time: a retried Job cannot start a
//     second run.
//   - experiment operations record nothing: an experiment is a label on
//     runs, and its id is stable.
//
// Artifacts live on a volume (only file:// pipeline roots): a claim of the
// run's own, or the Provider's artifactsClaim, shared by the namespaces it
// admits. On that claim each namespace has a directory, the only part of
// the claim its runs mount (artifacts.go), so one namespace's steps can
// neither read nor plant another's files.
//
// The decisions (names, labels, the objects built from a resource) are pure
// functions in build.go and names.go; ops.go does the I/O through a
// controller-runtime client in the namespace the provider step runs in.
package tektonprovider
