// Package namespaces answers what the controllers ask of a Namespace. It is
// apart from the engine because the Provider controller, which is no kind
// of the engine, asks it too.
package namespaces

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Terminating says whether namespace is being deleted (or gone): nothing
// can be created there any more.
func Terminating(ctx context.Context, c client.Reader, namespace string) (bool, error) {
	var ns corev1.Namespace
	switch err := c.Get(ctx, types.NamespacedName{Name: namespace}, &ns); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}
