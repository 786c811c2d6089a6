package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	k8sauthn "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

// errServiceAccountNotFound marks a Provider whose service account is missing.
var errServiceAccountNotFound = errors.New("service account not found")

// serviceAccountKeychain returns a keychain built from the image pull
// secrets of the service account, which must exist in namespace.
func serviceAccountKeychain(ctx context.Context, c client.Reader, namespace, name string) (authn.Keychain, error) {
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sa); err != nil {
		if apierrors.IsNotFound(err) {
			return authn.DefaultKeychain, fmt.Errorf("%w: %s/%s", errServiceAccountNotFound, namespace, name)
		}
		return nil, fmt.Errorf("reading service account %s/%s: %w", namespace, name, err)
	}
	var secrets []corev1.Secret
	for _, ref := range sa.ImagePullSecrets {
		s := corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &s); err != nil {
			if apierrors.IsNotFound(err) {
				continue // as the kubelet does: a missing pull secret is skipped
			}
			return nil, fmt.Errorf("reading image pull secret %s/%s: %w", namespace, ref.Name, err)
		}
		secrets = append(secrets, s)
	}
	if len(secrets) == 0 {
		return authn.DefaultKeychain, nil
	}
	kc, err := k8sauthn.NewFromPullSecrets(ctx, secrets)
	if err != nil {
		return nil, fmt.Errorf("reading image pull secrets of %s/%s: %w", namespace, name, err)
	}
	return authn.NewMultiKeychain(kc, authn.DefaultKeychain), nil
}

// resolveImages pins the provider image (spec.image or spec.serviceImage)
// and every framework image.
func resolveImages(ctx context.Context, spec pipelinesv1beta1.ProviderSpec, keychain authn.Keychain) (string, []pipelinesv1beta1.Framework, error) {
	resolver := imageref.NewResolver(keychain)
	ref, field := spec.Image, "spec.image"
	if spec.ServiceImage != "" {
		ref, field = spec.ServiceImage, "spec.serviceImage"
	}
	image, err := resolver.Resolve(ctx, ref)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", field, err)
	}
	frameworks := make([]pipelinesv1beta1.Framework, len(spec.Frameworks))
	for i, f := range spec.Frameworks {
		pinned, err := resolver.Resolve(ctx, f.Image)
		if err != nil {
			return "", nil, fmt.Errorf("spec.frameworks[%s].image: %w", f.Name, err)
		}
		frameworks[i] = pipelinesv1beta1.Framework{Name: f.Name, Image: pinned}
	}
	return image, frameworks, nil
}
