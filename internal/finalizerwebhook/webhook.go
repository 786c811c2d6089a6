// Package finalizerwebhook adds the backend finalizer to the operator's
// kinds as they are created (a mutating admission webhook), so the
// operator's first reconcile need not write it: one API write less for
// every resource (issue 28). It is an optimisation, never a dependency:
// the webhook is registered with failurePolicy Ignore, and the engine
// still adds the finalizer to a resource that arrives without it (the
// webhook down, its certificate not yet injected, the finalizer removed by
// hand).
package finalizerwebhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// Path is where the API server posts the AdmissionReviews.
const Path = "/mutate-finalizer"

// WebhookName names the one webhook of the configuration (a
// fully-qualified name, as the API requires).
const WebhookName = "finalizer.pipelines.kubeflow.org"

// Resources are the kinds whose deletion the operator follows through the
// backend (the engine's kinds): each gets the finalizer.
var Resources = []string{"experiments", "pipelines", "runs", "runschedules"}

// TimeoutSeconds bounds how long a create waits for the webhook before the
// API server gives up on it (and, the policy being Ignore, creates the
// object as sent).
const TimeoutSeconds = 3

// Webhook is the configuration's webhook calling clientConfig: what the
// chart installs (config/charts_test.go keeps them equal) and what envtest
// serves.
func Webhook(clientConfig admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:         WebhookName,
		ClientConfig: clientConfig,
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{pipelinesv1beta1.GroupVersion.Group},
				// Every version: a finalizer is metadata, the same in each,
				// so no object needs converting to be looked at.
				APIVersions: []string{"*"},
				Resources:   Resources,
				Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](TimeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
	}
}

// Patch is the JSON patch adding the finalizer to an object whose metadata
// is meta, or none if it has it already.
func Patch(meta metav1.ObjectMeta) []jsonpatch.JsonPatchOperation {
	if slices.Contains(meta.Finalizers, pipelinesv1beta1.FinalizerBackend) {
		return nil
	}
	if len(meta.Finalizers) == 0 {
		// "add" at /metadata/finalizers also replaces an explicit null.
		return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/metadata/finalizers",
			Value: []string{pipelinesv1beta1.FinalizerBackend}}}
	}
	return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/metadata/finalizers/-",
		Value: pipelinesv1beta1.FinalizerBackend}}
}

// Handler answers the API server's AdmissionReviews.
type Handler struct{}

var _ admission.Handler = Handler{}

// Handle allows every request it is sent, patched with the finalizer when
// it is a create of one of Resources that lacks it. It never refuses: the
// schema and the engine judge the object, not this webhook.
func (Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.Resource.Group != pipelinesv1beta1.GroupVersion.Group ||
		!slices.Contains(Resources, req.Resource.Resource) || req.SubResource != "" {
		return admission.Allowed("")
	}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		// Let the object through as sent: the API server's own decoding
		// will give the user the error, and the engine adds the finalizer.
		return admission.Allowed(fmt.Sprintf("not patched: reading the object's metadata: %v", err))
	}
	patch := Patch(obj.Metadata)
	if patch == nil {
		return admission.Allowed("")
	}
	return admission.Patched("", patch...)
}

// HTTPHandler serves Handler at Path on a webhook server.
func HTTPHandler() http.Handler {
	return &admission.Webhook{Handler: Handler{}}
}
