package provider

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// compilerAccount is the service account compile pods run as: no role
// binding names it, and it never has a token mounted, so tenant code in a
// compile pod has no identity in the cluster (nor one a cloud's workload
// identity could map from the provider's account).
func compilerAccount(namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{
			Name: taskdef.CompilerServiceAccount, Namespace: namespace,
			Labels: map[string]string{contract.LabelManagedBy: contract.ManagedByOperator},
			Annotations: map[string]string{contract.AnnotationDescription: "Runs kfp-tekton-operator's compile pods (tenant code): " +
				"bind no roles to it."},
		},
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// ensureCompilerAccount applies the compiler account unless it is already
// as applied (one uncached read per Provider reconcile).
func (a *taskApplier) ensureCompilerAccount(ctx context.Context, namespace string) error {
	current := &corev1.ServiceAccount{}
	err := a.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: taskdef.CompilerServiceAccount}, current)
	switch {
	case err == nil && current.Labels[contract.LabelManagedBy] == contract.ManagedByOperator &&
		current.AutomountServiceAccountToken != nil && !*current.AutomountServiceAccountToken:
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading service account %s/%s: %w", namespace, taskdef.CompilerServiceAccount, err)
	}
	if err := a.client.Patch(ctx, compilerAccount(namespace), client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying service account %s/%s: %w", namespace, taskdef.CompilerServiceAccount, err)
	}
	return nil
}

// removeCompilerAccount deletes the compiler account if the operator made it.
func (a *taskApplier) removeCompilerAccount(ctx context.Context, namespace string) error {
	current := &corev1.ServiceAccount{}
	err := a.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: taskdef.CompilerServiceAccount}, current)
	if apierrors.IsNotFound(err) || (err == nil && current.Labels[contract.LabelManagedBy] != contract.ManagedByOperator) {
		return nil
	}
	if err == nil {
		err = a.client.Delete(ctx, current, client.Preconditions{UID: &current.UID})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting service account %s/%s: %w", namespace, taskdef.CompilerServiceAccount, err)
	}
	return nil
}
