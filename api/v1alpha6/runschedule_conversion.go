package v1alpha6

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// RunSchedule:
//
//	v1alpha6                          v1beta1
//	spec (run spec fields)            spec (the run spec, see status_conversion.go)
//	spec.schedule                     spec.schedule
//	status                            status (see status_conversion.go)

// RunScheduleToHub is the v1beta1 form of a v1alpha6 RunSchedule.
func RunScheduleToHub(in *RunSchedule, d Defaults) (*v1beta1.RunSchedule, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.RunSchedule{TypeMeta: typeMeta(v1beta1.GroupVersion, "RunSchedule")}
	out.Spec.RunSpec = runSpecToHub(in.Spec.RunSpec, &rem, &rec, d)
	out.Spec.Schedule = scheduleToHub(in.Spec.Schedule)
	out.Status = statusToHub(in.Status, &rem, &rec, d)
	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// RunScheduleFromHub is the v1alpha6 form of a v1beta1 RunSchedule.
func RunScheduleFromHub(in *v1beta1.RunSchedule, d Defaults) (*RunSchedule, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &RunSchedule{TypeMeta: typeMeta(GroupVersion, "RunSchedule")}
	out.Spec.RunSpec = runSpecFromHub(in.Spec.RunSpec, &rec, &rem, d)
	out.Spec.Schedule = scheduleFromHub(in.Spec.Schedule)
	out.Status = statusFromHub(in.Status, &rec, &rem, d)
	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

// ConvertTo converts this RunSchedule to the hub version, v1beta1.
func (src *RunSchedule) ConvertTo(dstRaw conversion.Hub) error {
	out, err := RunScheduleToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.RunSchedule) = *out
	return nil
}

// ConvertFrom converts a v1beta1 RunSchedule to this version.
func (dst *RunSchedule) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := RunScheduleFromHub(srcRaw.(*v1beta1.RunSchedule), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
