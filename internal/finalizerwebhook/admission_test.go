package finalizerwebhook_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1alpha6 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/fixture"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { testenv.RunTests(m, &cp) }

// TestTheAPIServerCreatesTheEnginesKindsWithTheFinalizer: through a real
// kube-apiserver calling the webhook as the chart registers it, every kind
// the engine deletes through the backend is stored with the finalizer from
// its first version, in either API version, keeping finalizers of others;
// other kinds are stored as sent.
func TestTheAPIServerCreatesTheEnginesKindsWithTheFinalizer(t *testing.T) {
	ctx := context.Background()
	ns := "finalizer-webhook"
	require.NoError(t, cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	meta := func(name string, finalizers ...string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers}
	}
	for name, c := range map[string]struct {
		obj  client.Object
		want []string
	}{
		"a Pipeline": {&pipelinesv1beta1.Pipeline{ObjectMeta: meta("p"), Spec: fixture.NewPipeline(ns, "p").Spec},
			[]string{pipelinesv1beta1.FinalizerBackend}},
		"an Experiment keeping another's finalizer": {&pipelinesv1beta1.Experiment{ObjectMeta: meta("e", "example.com/keep"),
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp"}}, []string{"example.com/keep", pipelinesv1beta1.FinalizerBackend}},
		"a Run": {&pipelinesv1beta1.Run{ObjectMeta: meta("r"), Spec: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "p"}},
			[]string{pipelinesv1beta1.FinalizerBackend}},
		"a RunSchedule": {&pipelinesv1beta1.RunSchedule{ObjectMeta: meta("rs"), Spec: pipelinesv1beta1.RunScheduleSpec{
			RunSpec:  pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "p"},
			Schedule: pipelinesv1beta1.Schedule{CronExpression: "0 2 * * *"}}}, []string{pipelinesv1beta1.FinalizerBackend}},
		"a v1alpha6 Experiment (kfp-operator's manifests)": {&pipelinesv1alpha6.Experiment{ObjectMeta: meta("e6")},
			[]string{pipelinesv1beta1.FinalizerBackend}},
		"a RunConfiguration: not the engine's": {&pipelinesv1beta1.RunConfiguration{ObjectMeta: meta("rc"),
			Spec: pipelinesv1beta1.RunConfigurationSpec{Run: pipelinesv1beta1.RunSpec{Provider: "kfp", Pipeline: "p"}}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, cp.Client.Create(ctx, c.obj))
			assert.Equal(t, c.want, c.obj.GetFinalizers(), "the create's response")
			require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(c.obj), c.obj))
			assert.Equal(t, c.want, c.obj.GetFinalizers(), "as stored")
		})
	}
}
