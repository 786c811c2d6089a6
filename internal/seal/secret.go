package seal

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// SecretKey is the key of the Secret's data that holds the seal key.
const SecretKey = "key"

// LoadOrCreate reads the seal key from Secret name, creating the Secret
// with a new random key if it does not exist. Every replica of the operator
// reads the same one; the first to start creates it. It is never rotated
// by the operator: a new key would orphan every record sealed with the old
// one (pending events would be refused rather than sent).
func LoadOrCreate(ctx context.Context, c client.Client, name types.NamespacedName) (*Key, error) {
	for attempt := 0; attempt < 2; attempt++ {
		secret := &corev1.Secret{}
		err := c.Get(ctx, name, secret)
		if err == nil {
			key, err := NewKey(secret.Data[SecretKey])
			if err != nil {
				return nil, fmt.Errorf("secret %s: %w", name, err)
			}
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the seal key %s: %w", name, err)
		}
		fresh := make([]byte, MinKeyBytes)
		if _, err := rand.Read(fresh); err != nil {
			return nil, err
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name,
				Annotations: map[string]string{contract.AnnotationDescription: "kfp-tekton-operator's key sealing the records it keeps in statuses; " +
					"deleting it makes every pending completion event unpublishable."}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{SecretKey: fresh},
		}
		switch err := c.Create(ctx, secret); {
		case err == nil:
			return NewKey(fresh)
		case !apierrors.IsAlreadyExists(err):
			return nil, fmt.Errorf("creating the seal key %s: %w", name, err)
		}
		// Another replica created it first: read theirs.
	}
	return nil, fmt.Errorf("the seal key %s was created and deleted again while being read", name)
}
