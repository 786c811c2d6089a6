package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// ProviderKey resolves a provider reference made from namespace.
func ProviderKey(ref pipelinesv1beta1.ProviderReference, namespace string) types.NamespacedName {
	if ns, name, ok := strings.Cut(string(ref), "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: namespace, Name: string(ref)}
}

// problem is a reason the resource cannot be synchronised now, reported in
// its conditions; it is not an error of the reconcile.
type problem struct {
	reason  string
	message string
}

func (p *problem) Error() string { return p.reason + ": " + p.message }

// loadProvider returns the usable Provider the resource references, or the
// problem that stops it.
func loadProvider(ctx context.Context, c client.Reader, obj Subject) (*pipelinesv1beta1.Provider, error) {
	key := ProviderKey(obj.ProviderReference(), obj.GetNamespace())
	status := obj.CommonStatus()
	if status.Provider.Name != "" && status.Provider.ID != "" && status.Provider.Name != key.String() {
		return nil, &problem{pipelinesv1beta1.ReasonProviderChanged, fmt.Sprintf(
			"the provider cannot change once synchronised: it was %s and is now %s; delete and recreate the resource to move it",
			status.Provider.Name, key)}
	}
	p := &pipelinesv1beta1.Provider{}
	if err := c.Get(ctx, key, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &problem{pipelinesv1beta1.ReasonProviderNotFound, fmt.Sprintf("provider %s does not exist", key)}
		}
		return nil, err
	}
	if !admits(p, obj.GetNamespace()) {
		return nil, &problem{pipelinesv1beta1.ReasonNamespaceNotAllowed, fmt.Sprintf(
			"provider %s does not admit namespace %s: add it to the Provider's spec.allowedNamespaces", key, obj.GetNamespace())}
	}
	if !meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady) || p.Status.Image == "" {
		msg := fmt.Sprintf("provider %s is not Ready", key)
		if c := meta.FindStatusCondition(p.Status.Conditions, pipelinesv1beta1.ConditionReady); c != nil && c.Message != "" {
			msg += ": " + c.Message
		}
		return nil, &problem{pipelinesv1beta1.ReasonProviderNotReady, msg}
	}
	return p, nil
}

// admits says whether resources of namespace may use p: its own namespace
// always, others only when listed (or "*").
func admits(p *pipelinesv1beta1.Provider, namespace string) bool {
	return namespace == p.Namespace || slices.Contains(p.Spec.AllowedNamespaces, namespace) ||
		slices.Contains(p.Spec.AllowedNamespaces, "*")
}
