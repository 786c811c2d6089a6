package v1alpha6

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Provider:
//
//	v1alpha6                     v1beta1
//	spec.serviceImage            spec.serviceImage
//	spec.image                   spec.image, unless serviceImage is set (then recorded, as kfp-operator does)
//	spec.executionMode           spec.executionMode
//	spec.serviceAccount          spec.serviceAccount
//	spec.defaultBeamArgs         spec.defaultBeamArgs (numbers as text)
//	spec.pipelineRootStorage     spec.pipelineRootStorage
//	spec.parameters              spec.parameters
//	-                            the rest of the spec: frameworks, allowedNamespaces, artifactRepository, ... (recorded)
//	status.observedGeneration    status.observedGeneration
//	status.conditions            status.conditions
//	status.synchronizationState  reason of the Synchronized condition (recorded when it differs)
//	status.provider, version     - (recorded)
//	-                            the rest of the status: image, serviceImage, serviceURL, frameworks, ... (recorded)

// imagesToHub: v1beta1 runs either a CLI image or a provider service; a
// v1alpha6 Provider with a service image uses the service.
func imagesToHub(in providerImages) providerImages {
	if in.ServiceImage != "" {
		return providerImages{ServiceImage: in.ServiceImage}
	}
	return in
}

func imagesFromHub(in providerImages) providerImages { return in }

// ProviderToHub is the v1beta1 form of a v1alpha6 Provider.
func ProviderToHub(in *Provider, d Defaults) (*v1beta1.Provider, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.Provider{TypeMeta: typeMeta(v1beta1.GroupVersion, "Provider")}

	if rem.ProviderSpec != nil {
		out.Spec = *rem.ProviderSpec
	}
	images, recImages := toHub(providerImages{Image: in.Spec.Image, ServiceImage: in.Spec.ServiceImage}, rem.Images, imagesToHub, imagesFromHub)
	out.Spec.Image, out.Spec.ServiceImage, rec.Images = images.Image, images.ServiceImage, recImages
	out.Spec.ExecutionMode = v1beta1.ExecutionMode(in.Spec.ExecutionMode)
	out.Spec.ServiceAccount = in.Spec.ServiceAccount
	var recArgs *[]NamedValue
	out.Spec.DefaultBeamArgs, recArgs = toHub(in.Spec.DefaultBeamArgs, optional(rem.DefaultBeamArgs), namedValuesToHub, namedValuesFromHub)
	rec.DefaultBeamArgs = deref(recArgs)
	out.Spec.PipelineRootStorage = in.Spec.PipelineRootStorage
	out.Spec.Parameters = in.Spec.Parameters

	if rem.ProviderStatus != nil {
		out.Status = *rem.ProviderStatus
	}
	out.Status.ObservedGeneration = in.Status.ObservedGeneration
	out.Status.Conditions = in.Status.Conditions
	rec.SynchronizationState = syncStateToHub(in.Status.SynchronizationState, in.Status.Conditions)
	if in.Status.Provider != (ProviderAndID{}) {
		rec.StatusProviderAndID = &in.Status.Provider
	}
	rec.Version = in.Status.Version

	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// ProviderFromHub is the v1alpha6 form of a v1beta1 Provider.
func ProviderFromHub(in *v1beta1.Provider, d Defaults) (*Provider, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &Provider{TypeMeta: typeMeta(GroupVersion, "Provider")}

	var images providerImages
	images, rem.Images = fromHub(providerImages{Image: in.Spec.Image, ServiceImage: in.Spec.ServiceImage}, rec.Images, imagesToHub, imagesFromHub)
	out.Spec.Image, out.Spec.ServiceImage = images.Image, images.ServiceImage
	out.Spec.ExecutionMode = string(in.Spec.ExecutionMode)
	out.Spec.ServiceAccount = in.Spec.ServiceAccount
	var recArgs *[]v1beta1.NamedValue
	out.Spec.DefaultBeamArgs, recArgs = fromHub(in.Spec.DefaultBeamArgs, optional(rec.DefaultBeamArgs), namedValuesToHub, namedValuesFromHub)
	rem.DefaultBeamArgs = deref(recArgs)
	out.Spec.PipelineRootStorage = in.Spec.PipelineRootStorage
	out.Spec.Parameters = in.Spec.Parameters
	restSpec := *in.Spec.DeepCopy()
	restSpec.Image, restSpec.ServiceImage, restSpec.ExecutionMode, restSpec.ServiceAccount = "", "", "", ""
	restSpec.DefaultBeamArgs, restSpec.PipelineRootStorage, restSpec.Parameters = nil, "", nil
	if !same(restSpec, v1beta1.ProviderSpec{}) {
		rem.ProviderSpec = &restSpec
	}

	out.Status.ObservedGeneration = in.Status.ObservedGeneration
	out.Status.Conditions = in.Status.Conditions
	out.Status.SynchronizationState = syncStateFromHub(in.Status.Conditions, rec.SynchronizationState)
	if rec.StatusProviderAndID != nil {
		out.Status.Provider = *rec.StatusProviderAndID
	}
	out.Status.Version = rec.Version
	rest := *in.Status.DeepCopy()
	rest.ObservedGeneration, rest.Conditions = 0, nil
	if !same(rest, v1beta1.ProviderStatus{}) {
		rem.ProviderStatus = &rest
	}

	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

// ConvertTo converts this Provider to the hub version, v1beta1.
func (src *Provider) ConvertTo(dstRaw conversion.Hub) error {
	out, err := ProviderToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.Provider) = *out
	return nil
}

// ConvertFrom converts a v1beta1 Provider to this version.
func (dst *Provider) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := ProviderFromHub(srcRaw.(*v1beta1.Provider), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
