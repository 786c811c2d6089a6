package v1alpha6

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Experiment:
//
//	v1alpha6              v1beta1
//	spec.provider         spec.provider
//	spec.description      spec.description
//	status                status (see status_conversion.go)

// ExperimentToHub is the v1beta1 form of a v1alpha6 Experiment.
func ExperimentToHub(in *Experiment, d Defaults) (*v1beta1.Experiment, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.Experiment{TypeMeta: typeMeta(v1beta1.GroupVersion, "Experiment")}
	var provider string
	provider, rec.Provider = convertProviderToHub(in.Spec.Provider, rem.ProviderNamespace, rem.Provider, d)
	out.Spec.Provider = v1beta1.ProviderReference(provider)
	out.Spec.Description = in.Spec.Description
	out.Status = statusToHub(in.Status, &rem, &rec, d)
	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// ExperimentFromHub is the v1alpha6 form of a v1beta1 Experiment.
func ExperimentFromHub(in *v1beta1.Experiment, d Defaults) (*Experiment, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &Experiment{TypeMeta: typeMeta(GroupVersion, "Experiment")}
	out.Spec.Provider, rem.ProviderNamespace, rem.Provider = convertProviderFromHub(string(in.Spec.Provider), rec.Provider, d)
	out.Spec.Description = in.Spec.Description
	out.Status = statusFromHub(in.Status, &rec, &rem, d)
	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

// ConvertTo converts this Experiment to the hub version, v1beta1.
func (src *Experiment) ConvertTo(dstRaw conversion.Hub) error {
	out, err := ExperimentToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.Experiment) = *out
	return nil
}

// ConvertFrom converts a v1beta1 Experiment to this version.
func (dst *Experiment) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := ExperimentFromHub(srcRaw.(*v1beta1.Experiment), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
