// Package testregistry serves an in-process OCI registry on 127.0.0.1 for
// tests that resolve image digests.
package testregistry

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// Registry is a running registry.
type Registry struct {
	// Host is "127.0.0.1:port".
	Host string
	t    testing.TB
}

// Start serves a registry until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://"), t: t}
}

// Push pushes a random image as repoAndTag ("team/provider:v1") and returns
// its full reference and digest.
func (r *Registry) Push(repoAndTag string) (ref, digest string) {
	r.t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		r.t.Fatal(err)
	}
	ref = r.Host + "/" + repoAndTag
	if err := crane.Push(img, ref); err != nil {
		r.t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		r.t.Fatal(err)
	}
	return ref, d.String()
}
