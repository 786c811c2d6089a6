// Package digest pins image references to the digest their registry serves,
// so a run or a provider executes exactly the image that was resolved.
package imageref

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ErrInvalidReference marks a reference that is not an image reference at
// all, as opposed to one the registry could not resolve.
var ErrInvalidReference = errors.New("invalid image reference")

// Resolver resolves image references with one keychain, caching answers so a
// matrix naming the same image a thousand times asks the registry once.
type Resolver struct {
	Keychain authn.Keychain
	cache    map[string]string
}

// NewResolver resolves with the given keychain (authn.DefaultKeychain reads
// the docker config, as docker and kubectl-ko do).
func NewResolver(keychain authn.Keychain) *Resolver {
	return &Resolver{Keychain: keychain, cache: map[string]string{}}
}

// Resolve returns ref pinned to its digest: "repo:tag@sha256:…" (the tag kept
// for readers). A reference that already has a digest is returned unchanged.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	if pinned, ok := r.cache[ref]; ok {
		return pinned, nil
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w: %w", ref, ErrInvalidReference, err)
	}
	if _, isDigest := parsed.(name.Digest); isDigest {
		return ref, nil
	}
	desc, err := remote.Head(parsed, remote.WithContext(ctx), remote.WithAuthFromKeychain(r.Keychain))
	if err != nil {
		return "", explain(parsed, err)
	}
	pinned := parsed.Name() + "@" + desc.Digest.String()
	r.cache[ref] = pinned
	return pinned, nil
}

func explain(ref name.Reference, err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch terr.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("image %q: %s not found in %s", ref, ref.Identifier(), ref.Context().Name())
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("image %q: registry %s refused access (check credentials): %w", ref, ref.Context().RegistryStr(), err)
		}
	}
	return fmt.Errorf("image %q: %w", ref, err)
}
