package runconfiguration

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
)

// FuzzPinPipeline: a reference with a version is kept as written; one
// without is pinned to the named Pipeline's current version, or to nothing
// while that Pipeline is missing; never a panic, whatever the text.
func FuzzPinPipeline(f *testing.F) {
	for _, s := range []string{
		"penguin", "penguin:v1", "penguin:", ":v1", ":", "", "penguin:v1:extra", "missing", "Penguin", "a/b",
		strings.Repeat("p", 300), "pen\x00guin",
	} {
		f.Add(s)
	}
	p := &pipelinesv1beta1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "penguin", Generation: 2},
		Status: pipelinesv1beta1.Status{
			Version:            "v7",
			ObservedGeneration: 2,
			Conditions: []metav1.Condition{{Type: pipelinesv1beta1.ConditionReady, Status: metav1.ConditionTrue,
				ObservedGeneration: 2, Reason: "Synchronized", LastTransitionTime: metav1.Now()}},
		},
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p).Build()}
	f.Fuzz(func(t *testing.T, ref string) {
		rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "rc", Generation: 5}}
		rc.Spec.Run.Pipeline = pipelinesv1beta1.PipelineReference(ref)
		pinned, version, id, err := r.pinPipeline(context.Background(), rc)
		name, written, hasVersion := strings.Cut(ref, ":")
		switch {
		case hasVersion:
			if err != nil || string(pinned) != ref || version != written || id != "rc-5" {
				t.Fatalf("%q pinned as %q, %q, %q, %v; want it as written", ref, pinned, version, id, err)
			}
		case err != nil:
			// Only a name the API would refuse reaches the client's errors.
			if name == p.Name || name == "missing" {
				t.Fatalf("%q: %v", ref, err)
			}
		case name == p.Name:
			if string(pinned) != name+":"+p.Status.Version || version != p.Status.Version || id != "pipeline-2" {
				t.Fatalf("%q pinned as %q, %q, %q", ref, pinned, version, id)
			}
		default:
			if pinned != "" || version != "" || id != "" {
				t.Fatalf("%q names no Pipeline, but pinned as %q, %q, %q", ref, pinned, version, id)
			}
		}
	})
}
