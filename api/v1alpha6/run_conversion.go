package v1alpha6

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Run:
//
//	v1alpha6                          v1beta1
//	spec                              spec (the run spec, see status_conversion.go)
//	status (common)                   status (common, see status_conversion.go)
//	status.observedPipelineVersion    status.observedPipelineVersion
//	status.dependencies               status.dependencies (completedAt and seal recorded)
//	status.completionState            status.completionState
//	status.markedCompletedAt          status.markedCompletedAt
//	-                                 status.completionMessage, status.completionEvents (recorded)

// RunToHub is the v1beta1 form of a v1alpha6 Run.
func RunToHub(in *Run, d Defaults) (*v1beta1.Run, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.Run{TypeMeta: typeMeta(v1beta1.GroupVersion, "Run")}
	out.Spec = runSpecToHub(in.Spec, &rem, &rec, d)
	out.Status.Status = statusToHub(in.Status.Status, &rem, &rec, d)
	out.Status.ObservedPipelineVersion = in.Status.ObservedPipelineVersion
	out.Status.Dependencies.RunConfigurations = convertDependenciesToHub(in.Status.Dependencies.RunConfigurations, &rem)
	out.Status.CompletionState = v1beta1.CompletionState(in.Status.CompletionState)
	out.Status.MarkedCompletedAt = in.Status.MarkedCompletedAt
	out.Status.CompletionMessage = rem.CompletionMessage
	if rem.CompletionEvents != nil {
		out.Status.CompletionEvents = *rem.CompletionEvents
	}
	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// RunFromHub is the v1alpha6 form of a v1beta1 Run.
func RunFromHub(in *v1beta1.Run, d Defaults) (*Run, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &Run{TypeMeta: typeMeta(GroupVersion, "Run")}
	out.Spec = runSpecFromHub(in.Spec, &rec, &rem, d)
	out.Status.Status = statusFromHub(in.Status.Status, &rec, &rem, d)
	out.Status.ObservedPipelineVersion = in.Status.ObservedPipelineVersion
	out.Status.Dependencies.RunConfigurations = convertDependenciesFromHub(in.Status.Dependencies.RunConfigurations, &rem)
	out.Status.CompletionState = CompletionState(in.Status.CompletionState)
	out.Status.MarkedCompletedAt = in.Status.MarkedCompletedAt
	rem.CompletionMessage = in.Status.CompletionMessage
	rem.CompletionEvents = completionEventsRecord(in.Status.CompletionEvents)
	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

func completionEventsRecord(in v1beta1.CompletionEvents) *v1beta1.CompletionEvents {
	if same(in, v1beta1.CompletionEvents{}) {
		return nil
	}
	return &in
}

// ConvertTo converts this Run to the hub version, v1beta1.
func (src *Run) ConvertTo(dstRaw conversion.Hub) error {
	out, err := RunToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.Run) = *out
	return nil
}

// ConvertFrom converts a v1beta1 Run to this version.
func (dst *Run) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := RunFromHub(srcRaw.(*v1beta1.Run), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
