package v1beta1

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// The provider-reference helpers live beside ProviderReference so every
// package that resolves one (the controllers, the events endpoint) reads it
// the same way without importing the lifecycle engine.

// ProviderKey resolves a provider reference made from namespace: "name"
// names a Provider in namespace, "namespace/name" one anywhere.
func ProviderKey(ref ProviderReference, namespace string) types.NamespacedName {
	if ns, name, ok := strings.Cut(string(ref), "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: namespace, Name: string(ref)}
}

// Admits says whether resources of namespace may use p: its own namespace
// always, others only when listed (or "*").
func (p *Provider) Admits(namespace string) bool {
	return namespace == p.Namespace || slices.Contains(p.Spec.AllowedNamespaces, namespace) ||
		slices.Contains(p.Spec.AllowedNamespaces, "*")
}
