package v1alpha6

import (
	"regexp"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Status, the run spec and the values they share.
//
//	v1alpha6                           v1beta1
//	status.provider.name               status.provider.name (NAMESPACE/NAME: namespace recorded as providerStatusNamespace)
//	status.provider.id                 status.provider.id
//	status.synchronizationState        reason of the Synchronized condition (recorded when it differs)
//	status.version                     status.version
//	status.observedGeneration          status.observedGeneration
//	status.conditions                  status.conditions
//	spec.provider                      spec.provider (NAMESPACE/NAME: namespace recorded as providerNamespace)
//	spec.pipeline                      spec.pipeline
//	spec.experimentName                spec.experimentName
//	spec.runtimeParameters             spec.parameters (numbers as text; v1beta1's optional recorded)
//	spec.parameters (alias)            spec.parameters, after runtimeParameters (the split recorded)
//	spec.artifacts                     spec.artifacts (path COMPONENT:OUTPUT gains its index :0)
//	-                                  spec.artifactRepositoryRef (recorded)

func statusToHub(in Status, rem *v1beta1Remainder, rec *v1alpha6Remainder, d Defaults) v1beta1.Status {
	var out v1beta1.Status
	out.Provider.Name, rec.StatusProvider = convertProviderToHub(in.Provider.Name, rem.ProviderStatusNamespace, rem.StatusProvider, d)
	out.Provider.ID = in.Provider.ID
	out.Version = in.Version
	out.ObservedGeneration = in.ObservedGeneration
	out.Conditions = in.Conditions
	rec.SynchronizationState = syncStateToHub(in.SynchronizationState, in.Conditions)
	return out
}

func statusFromHub(in v1beta1.Status, rec *v1alpha6Remainder, rem *v1beta1Remainder, d Defaults) Status {
	var out Status
	out.Provider.Name, rem.ProviderStatusNamespace, rem.StatusProvider = convertProviderFromHub(in.Provider.Name, rec.StatusProvider, d)
	out.Provider.ID = in.Provider.ID
	out.Version = in.Version
	out.ObservedGeneration = in.ObservedGeneration
	out.Conditions = in.Conditions
	out.SynchronizationState = syncStateFromHub(in.Conditions, rec.SynchronizationState)
	return out
}

func runSpecToHub(in RunSpec, rem *v1beta1Remainder, rec *v1alpha6Remainder, d Defaults) v1beta1.RunSpec {
	var out v1beta1.RunSpec
	var provider string
	provider, rec.Provider = convertProviderToHub(in.Provider, rem.ProviderNamespace, rem.Provider, d)
	out.Provider = v1beta1.ProviderReference(provider)
	out.Pipeline = v1beta1.PipelineReference(in.Pipeline)
	out.ExperimentName = in.ExperimentName
	var recParams *runParameters
	var remParams *[]v1beta1.RuntimeParameter
	if rem.Parameters != nil {
		remParams = &rem.Parameters
	}
	out.Parameters, recParams = toHub(runParameters{in.RuntimeParameters, in.Parameters}, remParams, runParametersToHub, runParametersFromHub)
	if recParams != nil {
		rec.RuntimeParameters, rec.Parameters = recParams.RuntimeParameters, recParams.Parameters
	}
	var recArtifacts *[]OutputArtifact
	out.Artifacts, recArtifacts = toHub(in.Artifacts, optional(rem.Artifacts), artifactsToHub, artifactsFromHub)
	rec.Artifacts = deref(recArtifacts)
	out.ArtifactRepositoryRef = rem.ArtifactRepositoryRef
	return out
}

func runSpecFromHub(in v1beta1.RunSpec, rec *v1alpha6Remainder, rem *v1beta1Remainder, d Defaults) RunSpec {
	var out RunSpec
	out.Provider, rem.ProviderNamespace, rem.Provider = convertProviderFromHub(string(in.Provider), rec.Provider, d)
	out.Pipeline = string(in.Pipeline)
	out.ExperimentName = in.ExperimentName
	var recParams *runParameters
	if rec.RuntimeParameters != nil || rec.Parameters != nil {
		recParams = &runParameters{rec.RuntimeParameters, rec.Parameters}
	}
	params, remParams := fromHub(in.Parameters, recParams, runParametersToHub, runParametersFromHub)
	out.RuntimeParameters, out.Parameters = params.RuntimeParameters, params.Parameters
	rem.Parameters = deref(remParams)
	var recArtifacts *[]v1beta1.OutputArtifact
	out.Artifacts, recArtifacts = fromHub(in.Artifacts, optional(rec.Artifacts), artifactsToHub, artifactsFromHub)
	rem.Artifacts = deref(recArtifacts)
	rem.ArtifactRepositoryRef = in.ArtifactRepositoryRef
	return out
}

// optional is a recorded list, nil when none was recorded.
func optional[T any](list []T) *[]T {
	if list == nil {
		return nil
	}
	return &list
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// runParameters are a v1alpha6 run spec's two parameter lists.
type runParameters struct {
	RuntimeParameters []RuntimeParameter
	Parameters        []RuntimeParameter
}

func runParametersToHub(in runParameters) []v1beta1.RuntimeParameter {
	if in.Parameters == nil {
		return parametersToHub(in.RuntimeParameters)
	}
	return append(parametersToHub(in.RuntimeParameters), parametersToHub(in.Parameters)...)
}

func runParametersFromHub(in []v1beta1.RuntimeParameter) runParameters {
	return runParameters{RuntimeParameters: parametersFromHub(in)}
}

func parametersToHub(in []RuntimeParameter) []v1beta1.RuntimeParameter {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.RuntimeParameter, len(in))
	for i, p := range in {
		out[i] = v1beta1.RuntimeParameter{Name: p.Name, Value: valueToHub(p.Value)}
		if p.ValueFrom != nil {
			out[i].ValueFrom = &v1beta1.ValueFrom{RunConfigurationRef: v1beta1.RunConfigurationRef{
				Name:           p.ValueFrom.RunConfigurationRef.Name,
				OutputArtifact: p.ValueFrom.RunConfigurationRef.OutputArtifact,
			}}
		}
	}
	return out
}

func parametersFromHub(in []v1beta1.RuntimeParameter) []RuntimeParameter {
	if in == nil {
		return nil
	}
	out := make([]RuntimeParameter, len(in))
	for i, p := range in {
		out[i] = RuntimeParameter{Name: p.Name, Value: valueFromHub(p.Value)}
		if p.ValueFrom != nil {
			out[i].ValueFrom = &ValueFrom{RunConfigurationRef: RunConfigurationRef{
				Name:           p.ValueFrom.RunConfigurationRef.Name,
				OutputArtifact: p.ValueFrom.RunConfigurationRef.OutputArtifact,
			}}
		}
	}
	return out
}

// artifactPath is kfp-operator's v1alpha6 artifact path
// (apis/pipelines/v1alpha6/artifact.go, ArtifactPathPattern): the index may
// be left out, meaning 0.
var artifactPath = regexp.MustCompile(`^([^\[\]:]+):([^\[\]:]+)(?::(\d*))?(?:\[([^\[\]:]+)\])?$`)

// artifactPathToHub spells a v1alpha6 path as v1beta1 requires, with its index.
func artifactPathToHub(path string) string {
	m := artifactPath.FindStringSubmatch(path)
	if m == nil || m[3] != "" {
		return path
	}
	out := m[1] + ":" + m[2] + ":0"
	if m[4] != "" {
		out += "[" + m[4] + "]"
	}
	return out
}

func artifactsToHub(in []OutputArtifact) []v1beta1.OutputArtifact {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.OutputArtifact, len(in))
	for i, a := range in {
		out[i] = v1beta1.OutputArtifact{Name: a.Name, Path: artifactPathToHub(a.Path)}
	}
	return out
}

func artifactsFromHub(in []v1beta1.OutputArtifact) []OutputArtifact {
	if in == nil {
		return nil
	}
	out := make([]OutputArtifact, len(in))
	for i, a := range in {
		out[i] = OutputArtifact{Name: a.Name, Path: a.Path}
	}
	return out
}

func scheduleToHub(in Schedule) v1beta1.Schedule {
	return v1beta1.Schedule{CronExpression: in.CronExpression, StartTime: in.StartTime, EndTime: in.EndTime}
}

func scheduleFromHub(in v1beta1.Schedule) Schedule {
	return Schedule{CronExpression: in.CronExpression, StartTime: in.StartTime, EndTime: in.EndTime}
}

func artifactListToHub(in []Artifact) []v1beta1.Artifact {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.Artifact, len(in))
	for i, a := range in {
		out[i] = v1beta1.Artifact{Name: a.Name, Location: a.Location}
	}
	return out
}

func artifactListFromHub(in []v1beta1.Artifact) []Artifact {
	if in == nil {
		return nil
	}
	out := make([]Artifact, len(in))
	for i, a := range in {
		out[i] = Artifact{Name: a.Name, Location: a.Location}
	}
	return out
}

// Run references: v1beta1 adds completedAt and a seal.

func runReferenceToHub(in RunReference) v1beta1.RunReference {
	return v1beta1.RunReference{ProviderID: in.ProviderID, Artifacts: artifactListToHub(in.Artifacts)}
}

func runReferenceFromHub(in v1beta1.RunReference) RunReference {
	return RunReference{ProviderID: in.ProviderID, Artifacts: artifactListFromHub(in.Artifacts)}
}

func dependenciesToHub(in map[string]RunReference) map[string]v1beta1.RunReference {
	if in == nil {
		return nil
	}
	out := make(map[string]v1beta1.RunReference, len(in))
	for k, v := range in {
		out[k] = runReferenceToHub(v)
	}
	return out
}

func dependenciesFromHub(in map[string]v1beta1.RunReference) map[string]RunReference {
	if in == nil {
		return nil
	}
	out := make(map[string]RunReference, len(in))
	for k, v := range in {
		out[k] = runReferenceFromHub(v)
	}
	return out
}

// convertDependenciesToHub keeps the v1beta1 dependencies a v1alpha6
// object recorded while they still agree with its own.
func convertDependenciesToHub(in map[string]RunReference, rem *v1beta1Remainder) map[string]v1beta1.RunReference {
	var rec *map[string]v1beta1.RunReference
	if rem.Dependencies != nil {
		rec = &rem.Dependencies
	}
	out, _ := toHub(in, rec, dependenciesToHub, dependenciesFromHub)
	return out
}

// convertDependenciesFromHub records what v1alpha6 cannot hold (completedAt, seal).
func convertDependenciesFromHub(in map[string]v1beta1.RunReference, rem *v1beta1Remainder) map[string]RunReference {
	out, rec := fromHub[map[string]RunReference](in, nil, dependenciesToHub, dependenciesFromHub)
	if rec != nil {
		rem.Dependencies = *rec
	}
	return out
}
