package v1alpha6

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Pipeline (kfp-operator's mapping: apis/pipelines/v1alpha6/pipeline_conversion.go
// and docs-gen/content/docs/reference/resources/migration/v1beta1.md):
//
//	v1alpha6                    v1beta1
//	spec.provider               spec.provider
//	spec.image                  spec.image
//	spec.env                    spec.env (numbers as text)
//	spec.tfxComponents          spec.framework {name: tfx, parameters.components}
//	spec.beamArgs               spec.framework.parameters.beamArgs ([{name, value}])
//	-                           another framework, or other parameters (recorded as framework)
//	-                           spec.artifactRepositoryRef (recorded)
//	status                      status (see status_conversion.go)

// TfxFramework is the framework of every v1alpha6 Pipeline.
const TfxFramework = "tfx"

// Keys of a tfx framework's parameters (kfp-operator's
// apis/pipelines/hub/conversions.go).
const (
	frameworkComponents = "components"
	frameworkBeamArgs   = "beamArgs"
)

// beamArg is a beam argument in the tfx framework's parameters.
type beamArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func tfxToHub(in tfx) v1beta1.PipelineFramework {
	out := v1beta1.PipelineFramework{Name: TfxFramework}
	if in.TfxComponents == "" && len(in.BeamArgs) == 0 {
		return out
	}
	out.Parameters = map[string]apiextensionsv1.JSON{}
	if in.TfxComponents != "" {
		raw, _ := json.Marshal(in.TfxComponents) // a string always marshals
		out.Parameters[frameworkComponents] = apiextensionsv1.JSON{Raw: raw}
	}
	if len(in.BeamArgs) > 0 {
		args := make([]beamArg, len(in.BeamArgs))
		for i, a := range in.BeamArgs {
			args[i] = beamArg{Name: a.Name, Value: valueToHub(a.Value)}
		}
		raw, _ := json.Marshal(args) // strings always marshal
		out.Parameters[frameworkBeamArgs] = apiextensionsv1.JSON{Raw: raw}
	}
	return out
}

// tfxFromHub reads what a v1alpha6 Pipeline can show of a framework: its
// components and beam arguments, where they are spelt as for tfx.
func tfxFromHub(in v1beta1.PipelineFramework) tfx {
	var out tfx
	if raw, ok := in.Parameters[frameworkComponents]; ok {
		var components string
		if json.Unmarshal(raw.Raw, &components) == nil {
			out.TfxComponents = components
		}
	}
	if raw, ok := in.Parameters[frameworkBeamArgs]; ok {
		var args []beamArg
		if json.Unmarshal(raw.Raw, &args) == nil {
			for _, a := range args {
				out.BeamArgs = append(out.BeamArgs, NamedValue{Name: a.Name, Value: valueFromHub(a.Value)})
			}
		}
	}
	return out
}

// PipelineToHub is the v1beta1 form of a v1alpha6 Pipeline.
func PipelineToHub(in *Pipeline, d Defaults) (*v1beta1.Pipeline, error) {
	meta, rem := metaToHub(in.ObjectMeta)
	var rec v1alpha6Remainder
	out := &v1beta1.Pipeline{TypeMeta: typeMeta(v1beta1.GroupVersion, "Pipeline")}

	var provider string
	provider, rec.Provider = convertProviderToHub(in.Spec.Provider, rem.ProviderNamespace, rem.Provider, d)
	out.Spec.Provider = v1beta1.ProviderReference(provider)
	out.Spec.Image = in.Spec.Image
	var recEnv *[]NamedValue
	out.Spec.Env, recEnv = toHub(in.Spec.Env, optional(rem.Env), namedValuesToHub, namedValuesFromHub)
	rec.Env = deref(recEnv)
	out.Spec.Framework, rec.Tfx = toHub(tfx{TfxComponents: in.Spec.TfxComponents, BeamArgs: in.Spec.BeamArgs}, rem.Framework, tfxToHub, tfxFromHub)
	out.Spec.ArtifactRepositoryRef = rem.ArtifactRepositoryRef
	out.Status = statusToHub(in.Status, &rem, &rec, d)

	var err error
	out.ObjectMeta, err = withV1alpha6Remainder(meta, &rec)
	return out, err
}

// PipelineFromHub is the v1alpha6 form of a v1beta1 Pipeline.
func PipelineFromHub(in *v1beta1.Pipeline, d Defaults) (*Pipeline, error) {
	meta, rec := metaFromHub(in.ObjectMeta)
	var rem v1beta1Remainder
	out := &Pipeline{TypeMeta: typeMeta(GroupVersion, "Pipeline")}

	out.Spec.Provider, rem.ProviderNamespace, rem.Provider = convertProviderFromHub(string(in.Spec.Provider), rec.Provider, d)
	out.Spec.Image = in.Spec.Image
	var recEnv *[]v1beta1.NamedValue
	out.Spec.Env, recEnv = fromHub(in.Spec.Env, optional(rec.Env), namedValuesToHub, namedValuesFromHub)
	rem.Env = deref(recEnv)
	var t tfx
	t, rem.Framework = fromHub(in.Spec.Framework, rec.Tfx, tfxToHub, tfxFromHub)
	out.Spec.TfxComponents, out.Spec.BeamArgs = t.TfxComponents, t.BeamArgs
	rem.ArtifactRepositoryRef = in.Spec.ArtifactRepositoryRef
	out.Status = statusFromHub(in.Status, &rec, &rem, d)

	var err error
	out.ObjectMeta, err = withV1beta1Remainder(meta, &rem)
	return out, err
}

// ConvertTo converts this Pipeline to the hub version, v1beta1.
func (src *Pipeline) ConvertTo(dstRaw conversion.Hub) error {
	out, err := PipelineToHub(src, ConversionDefaults)
	if err != nil {
		return err
	}
	*dstRaw.(*v1beta1.Pipeline) = *out
	return nil
}

// ConvertFrom converts a v1beta1 Pipeline to this version.
func (dst *Pipeline) ConvertFrom(srcRaw conversion.Hub) error {
	out, err := PipelineFromHub(srcRaw.(*v1beta1.Pipeline), ConversionDefaults)
	if err != nil {
		return err
	}
	*dst = *out
	return nil
}
