package finalizerwebhook_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/finalizerwebhook"
)

func TestPatch(t *testing.T) {
	for name, c := range map[string]struct {
		finalizers []string
		want       []jsonpatch.JsonPatchOperation
	}{
		"none: the list is made": {nil, []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/metadata/finalizers", Value: []string{pipelinesv1beta1.FinalizerBackend}}}},
		"an empty list: replaced": {[]string{}, []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/metadata/finalizers", Value: []string{pipelinesv1beta1.FinalizerBackend}}}},
		"another's: appended after it": {[]string{"example.com/keep"}, []jsonpatch.JsonPatchOperation{
			{Operation: "add", Path: "/metadata/finalizers/-", Value: pipelinesv1beta1.FinalizerBackend}}},
		"already there: nothing": {[]string{"example.com/keep", pipelinesv1beta1.FinalizerBackend}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, finalizerwebhook.Patch(metav1.ObjectMeta{Finalizers: c.finalizers}))
		})
	}
}

func request(op admissionv1.Operation, resource, subresource, object string) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation:   op,
		Resource:    metav1.GroupVersionResource{Group: "pipelines.kubeflow.org", Version: "v1beta1", Resource: resource},
		SubResource: subresource,
		Object:      runtime.RawExtension{Raw: []byte(object)},
	}}
}

func TestHandleOnlyPatchesCreatesOfTheEnginesKinds(t *testing.T) {
	const bare = `{"apiVersion":"pipelines.kubeflow.org/v1beta1","kind":"Run","metadata":{"name":"r","namespace":"a"}}`
	for name, c := range map[string]struct {
		req     admission.Request
		patched bool
	}{
		"a Run created":                {request(admissionv1.Create, "runs", "", bare), true},
		"a Pipeline created":           {request(admissionv1.Create, "pipelines", "", bare), true},
		"an Experiment created":        {request(admissionv1.Create, "experiments", "", bare), true},
		"a RunSchedule created":        {request(admissionv1.Create, "runschedules", "", bare), true},
		"a Provider: no backend":       {request(admissionv1.Create, "providers", "", bare), false},
		"a RunConfiguration":           {request(admissionv1.Create, "runconfigurations", "", bare), false},
		"an update: the engine's call": {request(admissionv1.Update, "runs", "", bare), false},
		"a status subresource":         {request(admissionv1.Create, "runs", "status", bare), false},
		"unreadable: let through":      {request(admissionv1.Create, "runs", "", `{"metadata":`), false},
	} {
		t.Run(name, func(t *testing.T) {
			resp := finalizerwebhook.Handler{}.Handle(context.Background(), c.req)
			assert.True(t, resp.Allowed, "the webhook never refuses")
			assert.Equal(t, c.patched, len(resp.Patches) > 0, "%v", resp.Patches)
		})
	}
}

// TestTheResponseIsAJSONPatchTheAPIServerTakes: the response carries the
// patch as the API server reads it (a base64 JSON patch of type JSONPatch).
func TestTheResponseIsAJSONPatchTheAPIServerTakes(t *testing.T) {
	resp := finalizerwebhook.Handler{}.Handle(context.Background(), request(admissionv1.Create, "runs", "",
		`{"metadata":{"name":"r","finalizers":["example.com/keep"]}}`))
	require.NoError(t, resp.Complete(admission.Request{}))
	require.NotNil(t, resp.PatchType)
	assert.Equal(t, admissionv1.PatchTypeJSONPatch, *resp.PatchType)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal(resp.Patch, &ops))
	assert.Equal(t, []map[string]any{{"op": "add", "path": "/metadata/finalizers/-", "value": pipelinesv1beta1.FinalizerBackend}}, ops)
}
