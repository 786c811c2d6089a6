package v1alpha6

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// RunConfiguration:
//
//	v1alpha6                            v1beta1
//	spec.run                            spec.run (the run spec, see status_conversion.go)
//	spec.triggers                       spec.triggers
//	status.synchronizationState         reason of the Synchronized condition (recorded when it differs)
//	status.provider                     status.provider.name (NAMESPACE/NAME: namespace recorded as providerStatusNamespace)
//	-                                   status.provider.id, status.version (recorded)
//	status.observedPipelineVersion      - (recorded)
//	status.triggeredPipelineVersion     status.triggeredPipelineVersion
//	status.triggers.runSpec.version     status.triggeredRunSpecVersion
//	status.triggers.runConfigurations   status.triggers.runConfigurations
//	status.latestRuns.succeeded         status.latestRuns.succeeded (completedAt and seal recorded)
//	status.dependencies                 status.dependencies (completedAt and seal recorded)
//	status.observedGeneration           status.observedGeneration
//	status.conditions                   status.conditions
//	-                                   status.completionEvents (recorded)

func latestRunsToHub(in LatestRuns) v1beta1.LatestRuns {
	if same(in.Succeeded, RunReference{}) {
		return v1beta1.LatestRuns{}
	}
	ref := runReferenceToHub(in.Succeeded)
	return v1beta1.LatestRuns{Succeeded: &ref}
}

func latestRunsFromHub(in v1beta1.LatestRuns) LatestRuns {
	if in.Succeeded == nil {
		return LatestRuns{}
	}
	return LatestRuns{Succeeded: runReferenceFromHub(*in.Succeeded)}
}

func triggersToHub(in Triggers) v1beta1.Triggers {
	out := v1beta1.Triggers{RunConfigurations: in.RunConfigurations}
	if in.Schedules != nil {
		out.Schedules = make([]v1beta1.Schedule, len(in.Schedules))
		for i, s := range in.Schedules {
			out.Schedules[i] = scheduleToHub(s)
		}
	}
	if in.OnChange != nil {
		out.OnChange = make([]v1beta1.OnChangeTrigger, len(in.OnChange))
		for i, o := range in.OnChange {
			out.OnChange[i] = v1beta1.OnChangeTrigger(o)
		}
	}
	return out
}

func triggersFromHub(in v1beta1.Triggers) Triggers {
	out := Triggers{RunConfigurations: in.RunConfigurations}
	if in.Schedules != nil {
		out.Schedules = make([]Schedule, len(in.Schedules))
		for i, s := range in.Schedules {
			out.Schedules[i] = scheduleFromHub(s)
		}
	}
	if in.OnChange != nil {
		out.OnChange = make([]OnChangeType, len(in.OnChange))
		for i, o := range in.OnChange {
			out.OnChange[i] = OnChangeType(o)
		}
	}
	return out
}

func triggeredByToHub(in map[string]TriggeredRunReference) map[string]v1beta1.TriggeredBy {
	if in == nil {
		return nil
	}
	out := make(map[string]v1beta1.TriggeredBy, len(in))
	for k, v := range in {
		out[k] = v1beta1.TriggeredBy{ProviderID: v.ProviderID}
	}
	return out
}

func triggeredByFromHub(in map[string]v1beta1.TriggeredBy) map[string]TriggeredRunReference {
	if in == nil {
		return nil
	}
	out := make(map[string]TriggeredRunReference, len(in))
	for k, v := range in {
		out[k] = TriggeredRunReference{ProviderID: v.ProviderID}
	}
	return out
}

// RunConfigurationToHub is the v1beta1 form of a v1alpha6 RunConfiguration.
func RunConfigurationToHub(in *RunConfiguration, d Defaults) (*v1beta1.RunConfiguration, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.RunConfiguration{TypeMeta: typeMeta(v1beta1.GroupVersion, "RunConfiguration")}
	out.Spec.Run = runSpecToHub(in.Spec.Run, &rem, &rec, d)
	out.Spec.Triggers = triggersToHub(in.Spec.Triggers)

	s := &out.Status
	s.Provider.Name, rec.StatusProvider = convertProviderToHub(in.Status.Provider, rem.ProviderStatusNamespace, rem.StatusProvider, d)
	s.Provider.ID = rem.ProviderID
	s.Version = rem.Version
	s.ObservedGeneration = in.Status.ObservedGeneration
	s.Conditions = in.Status.Conditions
	rec.SynchronizationState = syncStateToHub(in.Status.SynchronizationState, in.Status.Conditions)
	rec.ObservedPipelineVersion = in.Status.ObservedPipelineVersion
	s.TriggeredPipelineVersion = in.Status.TriggeredPipelineVersion
	s.TriggeredRunSpecVersion = in.Status.Triggers.RunSpec.Version
	s.Triggers.RunConfigurations = triggeredByToHub(in.Status.Triggers.RunConfigurations)
	s.LatestRuns, _ = toHub(in.Status.LatestRuns, rem.LatestRuns, latestRunsToHub, latestRunsFromHub)
	s.Dependencies.RunConfigurations = convertDependenciesToHub(in.Status.Dependencies.RunConfigurations, &rem)
	if rem.CompletionEvents != nil {
		s.CompletionEvents = *rem.CompletionEvents
	}

	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// RunConfigurationFromHub is the v1alpha6 form of a v1beta1 RunConfiguration.
func RunConfigurationFromHub(in *v1beta1.RunConfiguration, d Defaults) (*RunConfiguration, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &RunConfiguration{TypeMeta: typeMeta(GroupVersion, "RunConfiguration")}
	out.Spec.Run = runSpecFromHub(in.Spec.Run, &rec, &rem, d)
	out.Spec.Triggers = triggersFromHub(in.Spec.Triggers)

	s, o := &in.Status, &out.Status
	o.Provider, rem.ProviderStatusNamespace, rem.StatusProvider = convertProviderFromHub(s.Provider.Name, rec.StatusProvider, d)
	rem.ProviderID = s.Provider.ID
	rem.Version = s.Version
	o.ObservedGeneration = s.ObservedGeneration
	o.Conditions = s.Conditions
	o.SynchronizationState = syncStateFromHub(s.Conditions, rec.SynchronizationState)
	o.ObservedPipelineVersion = rec.ObservedPipelineVersion
	o.TriggeredPipelineVersion = s.TriggeredPipelineVersion
	o.Triggers.RunSpec.Version = s.TriggeredRunSpecVersion
	o.Triggers.RunConfigurations = triggeredByFromHub(s.Triggers.RunConfigurations)
	o.LatestRuns, rem.LatestRuns = fromHub[LatestRuns](s.LatestRuns, nil, latestRunsToHub, latestRunsFromHub)
	o.Dependencies.RunConfigurations = convertDependenciesFromHub(s.Dependencies.RunConfigurations, &rem)
	rem.CompletionEvents = completionEventsRecord(s.CompletionEvents)

	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

// ConvertTo converts this RunConfiguration to the hub version, v1beta1.
func (src *RunConfiguration) ConvertTo(dstRaw conversion.Hub) error {
	out, err := RunConfigurationToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.RunConfiguration) = *out
	return nil
}

// ConvertFrom converts a v1beta1 RunConfiguration to this version.
func (dst *RunConfiguration) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := RunConfigurationFromHub(srcRaw.(*v1beta1.RunConfiguration), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
