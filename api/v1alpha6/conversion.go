package v1alpha6

// Conversion to and from v1beta1, the hub and storage version.
//
// Every field both versions have maps directly (the table in each
// *_conversion.go). What one version cannot hold travels in one annotation
// on the converted object, as JSON, and is taken back (and the annotation
// removed) on the way back:
//
//   - AnnotationV1beta1Remainder, on a v1alpha6 object: the v1beta1 data
//     v1alpha6 has no field for (a provider's namespace, a framework other
//     than tfx, artifactRepositoryRef, a parameter's optional flag,
//     completion events, ...). Its key and its providerNamespace,
//     providerStatusNamespace and framework members are those of
//     kfp-operator's own conversion (apis/pipelines/v1alpha6/remainder.go),
//     so a manifest exported from kfp-operator keeps its provider's namespace.
//   - AnnotationV1alpha6Remainder, on a v1beta1 object: the v1alpha6 data
//     v1beta1 has no field for, or spells differently (numeric values, an
//     artifact path without its index, a synchronizationState that is not
//     the Synchronized condition's reason, ...).
//
// Both keys are reserved: the conversion owns them. A recorded value is
// used only while it still agrees with the field it stands for, so an edit
// made through the other version wins over a stale record.
//
// Each mapping is a pure function of the object and Defaults; ConvertTo and
// ConvertFrom apply them with ConversionDefaults.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	forked "k8s.io/apimachinery/third_party/forked/golang/reflect"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// The remainder annotations, defined with the rest of the API's vocabulary.
const (
	AnnotationV1beta1Remainder  = v1beta1.AnnotationV1beta1Remainder
	AnnotationV1alpha6Remainder = v1beta1.AnnotationV1alpha6Remainder
)

// Defaults is what a v1alpha6 object leaves unsaid.
type Defaults struct {
	// ProviderNamespace is the namespace a v1alpha6 provider name refers to
	// (in kfp-operator, its workflow namespace: DefaultProviderNamespace in
	// apis/pipelines/v1alpha6). Empty: the resource's own namespace, so the
	// name converts to a v1beta1 reference without namespace.
	ProviderNamespace string
}

// ConversionDefaults are the Defaults ConvertTo and ConvertFrom use; set
// them before serving conversions.
var ConversionDefaults Defaults

// v1beta1Remainder is the JSON of AnnotationV1beta1Remainder: v1beta1 data
// a v1alpha6 object cannot hold. Each kind uses some of its members.
type v1beta1Remainder struct {
	// ProviderNamespace is the namespace of spec.provider (spec.run.provider)
	// when the Defaults do not give it back (kfp-operator's member).
	ProviderNamespace string `json:"providerNamespace,omitempty"`
	// ProviderStatusNamespace likewise for status.provider.name.
	ProviderStatusNamespace string `json:"providerStatusNamespace,omitempty"`
	// Provider is the v1beta1 reference verbatim when a namespace alone
	// cannot give it back.
	Provider *string `json:"provider,omitempty"`
	// StatusProvider likewise for status.provider.name.
	StatusProvider *string `json:"statusProvider,omitempty"`

	// Pipeline
	Framework             *v1beta1.PipelineFramework     `json:"framework,omitempty"`
	Env                   []v1beta1.NamedValue           `json:"env,omitempty"`
	ArtifactRepositoryRef *v1beta1.ArtifactRepositoryRef `json:"artifactRepositoryRef,omitempty"`

	// Run, RunSchedule and RunConfiguration spec
	Parameters []v1beta1.RuntimeParameter `json:"parameters,omitempty"`
	Artifacts  []v1beta1.OutputArtifact   `json:"artifacts,omitempty"`

	// Run and RunConfiguration status
	ProviderID        string                          `json:"providerId,omitempty"`
	Version           string                          `json:"version,omitempty"`
	Dependencies      map[string]v1beta1.RunReference `json:"dependencies,omitempty"`
	LatestRuns        *v1beta1.LatestRuns             `json:"latestRuns,omitempty"`
	CompletionMessage string                          `json:"completionMessage,omitempty"`
	CompletionEvents  *v1beta1.CompletionEvents       `json:"completionEvents,omitempty"`

	// Provider
	Images          *providerImages      `json:"images,omitempty"`
	DefaultBeamArgs []v1beta1.NamedValue `json:"defaultBeamArgs,omitempty"`
	// ProviderSpec is the v1beta1 Provider spec less the fields v1alpha6
	// holds (frameworks, allowedNamespaces, artifactRepository, ...).
	ProviderSpec *v1beta1.ProviderSpec `json:"providerSpec,omitempty"`
	// ProviderStatus is the v1beta1 Provider status less observedGeneration
	// and conditions, which v1alpha6 holds.
	ProviderStatus *v1beta1.ProviderStatus `json:"providerStatus,omitempty"`
}

// v1alpha6Remainder is the JSON of AnnotationV1alpha6Remainder: v1alpha6
// data a v1beta1 object cannot hold. Each kind uses some of its members.
type v1alpha6Remainder struct {
	// Provider is spec.provider (spec.run.provider) verbatim when the
	// v1beta1 reference does not give it back.
	Provider *string `json:"provider,omitempty"`
	// StatusProvider likewise for status.provider (.name).
	StatusProvider *string `json:"statusProvider,omitempty"`
	// SynchronizationState when it is not the Synchronized condition's reason.
	SynchronizationState *syncStateRecord `json:"synchronizationState,omitempty"`

	// Pipeline
	Env []NamedValue `json:"env,omitempty"`
	Tfx *tfx         `json:"tfx,omitempty"`

	// Run, RunSchedule and RunConfiguration
	RuntimeParameters       []RuntimeParameter `json:"runtimeParameters,omitempty"`
	Parameters              []RuntimeParameter `json:"parameters,omitempty"`
	Artifacts               []OutputArtifact   `json:"artifacts,omitempty"`
	ObservedPipelineVersion string             `json:"observedPipelineVersion,omitempty"`

	// Provider
	Images          *providerImages `json:"images,omitempty"`
	DefaultBeamArgs []NamedValue    `json:"defaultBeamArgs,omitempty"`
	// StatusProviderAndID and Version are a Provider's status.provider and
	// status.version, which a v1beta1 Provider has not.
	StatusProviderAndID *ProviderAndID `json:"statusProviderAndId,omitempty"`
	Version             string         `json:"version,omitempty"`
}

// syncStateRecord is a synchronizationState other than the reason of the
// Synchronized condition, and that reason when it was recorded.
type syncStateRecord struct {
	State  SynchronizationState `json:"state"`
	Reason string               `json:"reason"`
}

// providerImages are a Provider's images: v1alpha6 may have both, v1beta1
// one of them.
type providerImages struct {
	Image        string `json:"image,omitempty"`
	ServiceImage string `json:"serviceImage,omitempty"`
}

// tfx is how a v1alpha6 Pipeline names its framework's parameters.
type tfx struct {
	TfxComponents string       `json:"tfxComponents,omitempty"`
	BeamArgs      []NamedValue `json:"beamArgs,omitempty"`
}

// semantic is equality as the API server sees it: nil and empty lists and
// maps alike, times by instant, JSON values by meaning rather than spelling.
var semantic = func() forked.Equalities {
	e := forked.Equalities{}
	for t, f := range equality.Semantic.Equalities {
		e[t] = f
	}
	if err := e.AddFunc(func(a, b apiextensionsv1.JSON) bool { return jsonEqual(a.Raw, b.Raw) }); err != nil {
		panic(err)
	}
	return e
}()

func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(orNull(a), &va) != nil || json.Unmarshal(orNull(b), &vb) != nil {
		return false
	}
	return equality.Semantic.DeepEqual(va, vb)
}

func orNull(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

func same(a, b any) bool { return semantic.DeepEqual(a, b) }

// toHub maps a v1alpha6 value a to v1beta1. recB is the v1beta1 value a
// v1alpha6 object recorded (nil: none): it wins while it still maps back to
// a. recA is a, to record on the v1beta1 object, when b does not map back
// to a.
func toHub[A, B any](a A, recB *B, to func(A) B, from func(B) A) (b B, recA *A) {
	if recB != nil && same(from(*recB), a) {
		b = *recB
	} else {
		b = to(a)
	}
	if !same(from(b), a) {
		recA = &a
	}
	return b, recA
}

// fromHub maps a v1beta1 value b to v1alpha6, the mirror of toHub.
func fromHub[A, B any](b B, recA *A, to func(A) B, from func(B) A) (a A, recB *B) {
	a = from(b)
	if recA != nil && same(to(*recA), b) {
		a = *recA
	}
	if !same(to(a), b) {
		recB = &b
	}
	return a, recB
}

// Provider references: v1alpha6 names a provider, v1beta1 references it
// as NAME (the resource's own namespace) or NAMESPACE/NAME.

// providerToHub is the v1beta1 reference for a v1alpha6 provider name.
func providerToHub(d Defaults) func(string) string {
	return func(name string) string {
		if d.ProviderNamespace != "" && name != "" && !strings.Contains(name, "/") {
			return d.ProviderNamespace + "/" + name
		}
		return name
	}
}

// providerFromHub is the provider name in a v1beta1 reference.
func providerFromHub(ref string) string {
	if ns, name, found := strings.Cut(ref, "/"); found && ns != "" {
		return name
	}
	return ref
}

// convertProviderToHub maps a v1alpha6 provider name to v1beta1, with the
// namespace (or whole reference) a v1alpha6 object recorded.
func convertProviderToHub(name, recNamespace string, recRef *string, d Defaults) (string, *string) {
	rec := recRef
	if rec == nil && recNamespace != "" {
		rec = ptrTo(recNamespace + "/" + name)
	}
	return toHub(name, rec, providerToHub(d), providerFromHub)
}

// convertProviderFromHub maps a v1beta1 reference to a v1alpha6 provider
// name, and what to record so it maps back: a namespace, as kfp-operator
// records it, or the whole reference.
func convertProviderFromHub(ref string, recName *string, d Defaults) (name, recNamespace string, recRef *string) {
	name, rec := fromHub(ref, recName, providerToHub(d), providerFromHub)
	if rec == nil {
		return name, "", nil
	}
	if ns, rest, found := strings.Cut(*rec, "/"); found && ns != "" && rest == name {
		return name, ns, nil
	}
	return name, "", rec
}

func ptrTo[T any](v T) *T { return &v }

// Values: v1alpha6 admits text or a whole number, v1beta1 holds text.

func valueToHub(v *intstr.IntOrString) string {
	switch {
	case v == nil:
		return ""
	case v.Type == intstr.Int:
		return strconv.FormatInt(int64(v.IntVal), 10)
	default:
		return v.StrVal
	}
}

func valueFromHub(s string) *intstr.IntOrString {
	if s == "" {
		return nil
	}
	v := intstr.FromString(s)
	return &v
}

func namedValuesToHub(in []NamedValue) []v1beta1.NamedValue {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.NamedValue, len(in))
	for i, nv := range in {
		out[i] = v1beta1.NamedValue{Name: nv.Name, Value: valueToHub(nv.Value)}
	}
	return out
}

func namedValuesFromHub(in []v1beta1.NamedValue) []NamedValue {
	if in == nil {
		return nil
	}
	out := make([]NamedValue, len(in))
	for i, nv := range in {
		out[i] = NamedValue{Name: nv.Name, Value: valueFromHub(nv.Value)}
	}
	return out
}

// Synchronization state: v1beta1 keeps it as the Synchronized condition's reason.

func synchronizedReason(conditions []metav1.Condition) string {
	for _, c := range conditions {
		if c.Type == v1beta1.ConditionSynchronized {
			return c.Reason
		}
	}
	return ""
}

// syncStateToHub records state when the conditions do not give it back.
func syncStateToHub(state SynchronizationState, conditions []metav1.Condition) *syncStateRecord {
	reason := synchronizedReason(conditions)
	if string(state) == reason {
		return nil
	}
	return &syncStateRecord{State: state, Reason: reason}
}

// syncStateFromHub is the Synchronized condition's reason, or the state
// recorded while that reason has not changed since.
func syncStateFromHub(conditions []metav1.Condition, rec *syncStateRecord) SynchronizationState {
	reason := synchronizedReason(conditions)
	if rec != nil && rec.Reason == reason {
		return rec.State
	}
	return SynchronizationState(reason)
}

// Annotations.

// takeRemainder decodes and removes the remainder annotation key, leaving
// an annotation it cannot decode in place.
func takeRemainder(annotations map[string]string, key string, into any) map[string]string {
	raw, ok := annotations[key]
	if !ok {
		return annotations
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return annotations
	}
	out := make(map[string]string, len(annotations))
	for k, v := range annotations {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// putRemainder sets the remainder annotation key when rem is not empty.
func putRemainder(annotations map[string]string, key string, rem, empty any) (map[string]string, error) {
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	if !same(rem, empty) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rem); err != nil {
			return nil, err
		}
		out[key] = strings.TrimSuffix(b.String(), "\n")
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// metaToHub is a v1alpha6 object's metadata for its v1beta1 form, and the
// remainder it recorded.
func metaToHub(in metav1.ObjectMeta) (metav1.ObjectMeta, v1beta1Remainder) {
	out := *in.DeepCopy()
	var rem v1beta1Remainder
	out.Annotations = takeRemainder(out.Annotations, AnnotationV1beta1Remainder, &rem)
	return out, rem
}

// metaFromHub is a v1beta1 object's metadata for its v1alpha6 form, and
// the remainder it recorded.
func metaFromHub(in metav1.ObjectMeta) (metav1.ObjectMeta, v1alpha6Remainder) {
	out := *in.DeepCopy()
	var rem v1alpha6Remainder
	out.Annotations = takeRemainder(out.Annotations, AnnotationV1alpha6Remainder, &rem)
	return out, rem
}

func withV1alpha6Remainder(m metav1.ObjectMeta, rem *v1alpha6Remainder) (metav1.ObjectMeta, error) {
	a, err := putRemainder(m.Annotations, AnnotationV1alpha6Remainder, rem, &v1alpha6Remainder{})
	m.Annotations = a
	return m, err
}

func withV1beta1Remainder(m metav1.ObjectMeta, rem *v1beta1Remainder) (metav1.ObjectMeta, error) {
	a, err := putRemainder(m.Annotations, AnnotationV1beta1Remainder, rem, &v1beta1Remainder{})
	m.Annotations = a
	return m, err
}

func typeMeta(gv interface{ String() string }, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}
