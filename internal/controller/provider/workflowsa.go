package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// AnnotationProviders marks a service account of the shared workflow
// namespace for the Providers (comma-separated "namespace/name") that may
// run as it. With a workflowNamespace, a Provider in another namespace
// could otherwise name any account there, and with it rights its own
// namespace never granted.
const AnnotationProviders = "pipelines.kubeflow.org/providers"

var errServiceAccountNotAllowed = errors.New("service account not marked for this Provider")

// marksProvider says whether the annotation value lists provider
// ("namespace/name"), ignoring spaces around the entries.
func marksProvider(annotation, provider string) bool {
	for _, entry := range strings.Split(annotation, ",") {
		if strings.TrimSpace(entry) == provider {
			return true
		}
	}
	return false
}

// checkWorkflowServiceAccount refuses a Provider outside the workflow
// namespace whose service account there is not marked for it. A Provider in
// the workflow namespace itself names an account of its own namespace, as
// without a workflowNamespace.
func checkWorkflowServiceAccount(ctx context.Context, reader client.Reader, workflowNamespace string, p *pipelinesv1beta1.Provider) error {
	if workflowNamespace == "" || p.Namespace == workflowNamespace {
		return nil
	}
	sa := &corev1.ServiceAccount{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: workflowNamespace, Name: p.Spec.ServiceAccount}, sa); err != nil {
		return client.IgnoreNotFound(err) // a missing account is reported as such elsewhere
	}
	provider := p.Namespace + "/" + p.Name
	if marksProvider(sa.Annotations[AnnotationProviders], provider) {
		return nil
	}
	return fmt.Errorf("%w: service account %s/%s may run only the Providers its annotation %s lists, and %s is not among them; the platform engineer adds it (%s: %q)",
		errServiceAccountNotAllowed, workflowNamespace, sa.Name, AnnotationProviders, provider, AnnotationProviders, provider)
}
