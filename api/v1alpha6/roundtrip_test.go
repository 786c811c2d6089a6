package v1alpha6_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Round trips as kubebuilder and Cluster API test conversions: a random
// object of either version, converted to the other and back, must come back
// equal, spec, status and metadata (annotations included), once nil and
// empty are normalised as the API server's JSON does.

// roundTrips per kind, direction and Defaults.
const roundTrips = 1500

var defaultsCases = []v1alpha6.Defaults{{}, {ProviderNamespace: "kfp-system"}}

// trickyRefs are provider references and names that test the namespace
// mapping's corners.
var trickyRefs = []string{
	"", "kfp", "team-a/kfp", "kfp-system/kfp", "/kfp", "kfp/", "a/b/c", "kfp-system/", "kfp-system/a/b", "/",
}

// trickyPaths are artifact paths in v1alpha6's and v1beta1's spellings.
var trickyPaths = []string{
	"Pusher:pushed_model", "Pusher:pushed_model:", "Pusher:pushed_model:0", "Pusher:pushed_model:7[pushed == 1]",
	"Pusher:pushed_model[pushed == 1]", "a:b:c:d", "train:model:0[x == 'a:b']", "",
}

func pick(c randfill.Continue, from []string) string {
	if c.Intn(3) == 0 {
		return c.String(8)
	}
	return from[c.Intn(len(from))]
}

func seconds(c randfill.Continue) metav1.Time {
	return metav1.NewTime(time.Unix(946684800+c.Int63n(946684800), 0).UTC())
}

// randomJSON is a compact JSON value, as the API server hands them over.
func randomJSON(c randfill.Continue, depth int) any {
	switch n := c.Intn(6); {
	case n == 0 || depth > 2:
		return c.String(6)
	case n == 1:
		return c.Int63n(1000)
	case n == 2:
		return c.Bool()
	case n == 3:
		list := make([]any, c.Intn(3))
		for i := range list {
			list[i] = randomJSON(c, depth+1)
		}
		return list
	case n == 4:
		obj := map[string]any{}
		for range c.Intn(3) {
			obj[c.String(5)] = randomJSON(c, depth+1)
		}
		return obj
	default:
		// a beam argument list, as the tfx framework spells it
		return []any{map[string]any{"name": c.String(4), "value": c.String(4)}}
	}
}

func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.25).NumElements(0, 3).MaxDepth(8).Funcs(
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(int32(c.Int63n(2000)) - 1000)
			} else if c.Intn(4) == 0 {
				*v = intstr.FromString("")
			} else {
				*v = intstr.FromString(c.String(10))
			}
		},
		func(t *metav1.Time, c randfill.Continue) { *t = seconds(c) },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			raw, _ := json.Marshal(randomJSON(c, 0))
			j.Raw = raw
		},
		func(p *v1beta1.ProviderReference, c randfill.Continue) {
			*p = v1beta1.ProviderReference(pick(c, trickyRefs))
		},
		func(f *v1beta1.PipelineFramework, c randfill.Continue) {
			c.FillNoCustom(f)
			if c.Bool() {
				f.Name = v1alpha6.TfxFramework
			}
		},
		func(a *v1alpha6.OutputArtifact, c randfill.Continue) {
			a.Name, a.Path = c.String(6), pick(c, trickyPaths)
		},
		func(a *v1beta1.OutputArtifact, c randfill.Continue) {
			a.Name, a.Path = c.String(6), pick(c, trickyPaths)
		},
		func(cond *metav1.Condition, c randfill.Continue) {
			*cond = metav1.Condition{
				Type:   pick(c, []string{v1beta1.ConditionReady, v1beta1.ConditionSynchronized}),
				Status: metav1.ConditionStatus(pick(c, []string{"True", "False", "Unknown"})),
				Reason: pick(c, []string{"Succeeded", "Creating", "Failed", ""}), Message: c.String(10),
				ObservedGeneration: c.Int63n(10), LastTransitionTime: seconds(c),
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			*m = metav1.ObjectMeta{Name: c.String(8), Namespace: c.String(8), Generation: c.Int63n(10)}
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
		},
	)
}

// withTrickyStrings puts corner-case values where a plain string field is
// a provider name or reference, and makes synchronizationState agree
// with the conditions half the time.
func withTrickyStrings(c randfill.Continue, providers ...*string) {
	for _, p := range providers {
		*p = pick(c, trickyRefs)
	}
}

func syncWithConditions(c randfill.Continue, state *v1alpha6.SynchronizationState, conditions []metav1.Condition) {
	if c.Bool() {
		*state = ""
		for _, cond := range conditions {
			if cond.Type == v1beta1.ConditionSynchronized {
				*state = v1alpha6.SynchronizationState(cond.Reason)
				break
			}
		}
	}
}

// normalised is the object as the API server's JSON has it, less nulls
// and empty lists and maps, which it treats as absent.
func normalised(t *testing.T, obj any) any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return prune(v)
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = prune(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(e)
		}
		return out
	default:
		return v
	}
}

// kindCase fills random objects of one kind in either version and
// converts them.
type kindCase struct {
	kind  string
	alpha func(c randfill.Continue) metav1.Object
	beta  func(c randfill.Continue) metav1.Object
	to    func(metav1.Object, v1alpha6.Defaults) (metav1.Object, error)
	from  func(metav1.Object, v1alpha6.Defaults) (metav1.Object, error)
}

func kind[A, B any, PA interface {
	*A
	metav1.Object
}, PB interface {
	*B
	metav1.Object
}](name string, fillA func(randfill.Continue, PA), fillB func(randfill.Continue, PB), to func(PA, v1alpha6.Defaults) (PB, error), from func(PB, v1alpha6.Defaults) (PA, error)) kindCase {
	return kindCase{
		kind: name,
		alpha: func(c randfill.Continue) metav1.Object {
			o := PA(new(A))
			c.Fill(o)
			reflect.ValueOf(o).Elem().FieldByName("TypeMeta").Set(reflect.ValueOf(metav1.TypeMeta{APIVersion: v1alpha6.GroupVersion.String(), Kind: name}))
			fillA(c, o)
			return o
		},
		beta: func(c randfill.Continue) metav1.Object {
			o := PB(new(B))
			c.Fill(o)
			reflect.ValueOf(o).Elem().FieldByName("TypeMeta").Set(reflect.ValueOf(metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: name}))
			fillB(c, o)
			return o
		},
		to:   func(o metav1.Object, d v1alpha6.Defaults) (metav1.Object, error) { return to(o.(PA), d) },
		from: func(o metav1.Object, d v1alpha6.Defaults) (metav1.Object, error) { return from(o.(PB), d) },
	}
}

var kinds = []kindCase{
	kind("Pipeline",
		func(c randfill.Continue, o *v1alpha6.Pipeline) {
			withTrickyStrings(c, &o.Spec.Provider, &o.Status.Provider.Name)
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.Pipeline) { withTrickyStrings(c, &o.Status.Provider.Name) },
		v1alpha6.PipelineToHub, v1alpha6.PipelineFromHub),
	kind("Experiment",
		func(c randfill.Continue, o *v1alpha6.Experiment) {
			withTrickyStrings(c, &o.Spec.Provider, &o.Status.Provider.Name)
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.Experiment) { withTrickyStrings(c, &o.Status.Provider.Name) },
		v1alpha6.ExperimentToHub, v1alpha6.ExperimentFromHub),
	kind("Run",
		func(c randfill.Continue, o *v1alpha6.Run) {
			withTrickyStrings(c, &o.Spec.Provider, &o.Status.Provider.Name)
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.Run) { withTrickyStrings(c, &o.Status.Provider.Name) },
		v1alpha6.RunToHub, v1alpha6.RunFromHub),
	kind("RunSchedule",
		func(c randfill.Continue, o *v1alpha6.RunSchedule) {
			withTrickyStrings(c, &o.Spec.Provider, &o.Status.Provider.Name)
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.RunSchedule) { withTrickyStrings(c, &o.Status.Provider.Name) },
		v1alpha6.RunScheduleToHub, v1alpha6.RunScheduleFromHub),
	kind("RunConfiguration",
		func(c randfill.Continue, o *v1alpha6.RunConfiguration) {
			withTrickyStrings(c, &o.Spec.Run.Provider, &o.Status.Provider)
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.RunConfiguration) { withTrickyStrings(c, &o.Status.Provider.Name) },
		v1alpha6.RunConfigurationToHub, v1alpha6.RunConfigurationFromHub),
	kind("Provider",
		func(c randfill.Continue, o *v1alpha6.Provider) {
			syncWithConditions(c, &o.Status.SynchronizationState, o.Status.Conditions)
		},
		func(c randfill.Continue, o *v1beta1.Provider) {},
		v1alpha6.ProviderToHub, v1alpha6.ProviderFromHub),
}

// reserved reports whether an object carries a conversion annotation,
// which the conversion owns.
func reserved(obj metav1.Object) bool {
	_, a := obj.GetAnnotations()[v1alpha6.AnnotationV1alpha6Remainder]
	_, b := obj.GetAnnotations()[v1alpha6.AnnotationV1beta1Remainder]
	return a || b
}

// withoutReserved is obj less the conversion's annotations.
func withoutReserved(obj metav1.Object) metav1.Object {
	out := reflect.New(reflect.TypeOf(obj).Elem())
	out.Elem().Set(reflect.ValueOf(obj).Elem())
	o := out.Interface().(metav1.Object)
	a := map[string]string{}
	for k, v := range obj.GetAnnotations() {
		if k != v1alpha6.AnnotationV1alpha6Remainder && k != v1alpha6.AnnotationV1beta1Remainder {
			a[k] = v
		}
	}
	o.SetAnnotations(a)
	return o
}

// forEachRoundTrip runs check on roundTrips random cases of every kind,
// direction and Defaults; check returns the expected and the actual object.
func forEachRoundTrip(t *testing.T, check func(c randfill.Continue, k kindCase, fromAlpha bool, d v1alpha6.Defaults) (want, got metav1.Object, err error)) {
	for _, k := range kinds {
		for _, fromAlpha := range []bool{true, false} {
			for _, d := range defaultsCases {
				dir := map[bool]string{true: "v1alpha6", false: "v1beta1"}[fromAlpha]
				t.Run(fmt.Sprintf("%s/from-%s/defaultNamespace=%q", k.kind, dir, d.ProviderNamespace), func(t *testing.T) {
					seed := rand.Int63()
					f := filler(seed)
					failures, done := 0, 0
					for i := 0; i < roundTrips; i++ {
						var want, got metav1.Object
						var err error
						f.Fill(&fillOne{fn: func(c randfill.Continue) { want, got, err = check(c, k, fromAlpha, d) }})
						if want == nil {
							continue
						}
						done++
						if err != nil {
							t.Fatalf("case %d (seed %d): %v", i, seed, err)
						}
						if diff := cmp.Diff(normalised(t, want), normalised(t, got)); diff != "" {
							t.Errorf("case %d (seed %d) changed the object (-want +got):\n%s", i, seed, diff)
							if failures++; failures >= 3 {
								t.FailNow()
							}
						}
					}
					if done < roundTrips*9/10 {
						t.Fatalf("only %d of %d cases ran", done, roundTrips)
					}
				})
			}
		}
	}
}

func convert(k kindCase, fromAlpha bool) (there, back func(metav1.Object, v1alpha6.Defaults) (metav1.Object, error)) {
	if fromAlpha {
		return k.to, k.from
	}
	return k.from, k.to
}

func random(c randfill.Continue, k kindCase, alpha bool) metav1.Object {
	if alpha {
		return k.alpha(c)
	}
	return k.beta(c)
}

// TestRoundTrips: a random object converted to the other version and back
// is the object it was.
func TestRoundTrips(t *testing.T) {
	forEachRoundTrip(t, func(c randfill.Continue, k kindCase, fromAlpha bool, d v1alpha6.Defaults) (metav1.Object, metav1.Object, error) {
		orig := random(c, k, fromAlpha)
		if reserved(orig) {
			return nil, nil, nil
		}
		there, back := convert(k, fromAlpha)
		mid, err := there(orig, d)
		if err != nil {
			return orig, nil, err
		}
		got, err := back(mid, d)
		return orig, got, err
	})
}

// TestRoundTripsAfterEdits: an object converted from the other version,
// then changed entirely (its annotations kept, so their records are stale),
// still converts to the other version and back with every field as the
// edit set it: a stale record never overrides what the object now says.
func TestRoundTripsAfterEdits(t *testing.T) {
	forEachRoundTrip(t, func(c randfill.Continue, k kindCase, fromAlpha bool, d v1alpha6.Defaults) (metav1.Object, metav1.Object, error) {
		first := random(c, k, !fromAlpha)
		if reserved(first) {
			return nil, nil, nil
		}
		there, back := convert(k, fromAlpha)
		converted, err := back(first, d)
		if err != nil {
			return first, nil, err
		}
		edited := random(c, k, fromAlpha)
		if reserved(edited) {
			return nil, nil, nil
		}
		edited.SetAnnotations(converted.GetAnnotations())
		mid, err := there(edited, d)
		if err != nil {
			return edited, nil, err
		}
		got, err := back(mid, d)
		if err != nil {
			return edited, nil, err
		}
		// What the stale records held for fields the other version has
		// no home for may stay recorded; every field the edit set must
		// come back as it was set.
		return withoutReserved(edited), withoutReserved(got), nil
	})
}

// fillOne hands a randfill.Continue to fn.
type fillOne struct{ fn func(randfill.Continue) }

// RandFill makes fillOne a randfill.NativeSelfFiller.
func (f *fillOne) RandFill(c randfill.Continue) { f.fn(c) }
