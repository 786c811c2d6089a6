// Package registry serves an in-process OCI registry on 127.0.0.1, for
// tests, benchmarks and the local control plane to resolve image digests
// without the internet.
package registry

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// Serve starts a registry on 127.0.0.1 holding a random image under each of
// refs ("team/provider:v1"), and returns its host and how to stop it.
func Serve(refs ...string) (host string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	host = l.Addr().String()
	stop = func() { _ = srv.Close() }
	for _, ref := range refs {
		if _, err := push(host, ref); err != nil {
			stop()
			return "", nil, fmt.Errorf("pushing %s: %w", ref, err)
		}
	}
	return host, stop, nil
}

func push(host, repoAndTag string) (digest string, err error) {
	img, err := random.Image(256, 1)
	if err != nil {
		return "", err
	}
	if err := crane.Push(img, host+"/"+repoAndTag); err != nil {
		return "", err
	}
	d, err := img.Digest()
	return d.String(), err
}

// Registry is a registry serving one test.
type Registry struct {
	// Host is "127.0.0.1:port".
	Host string
	t    T
}

// T is what a Registry needs of a test; *testing.T and *testing.B satisfy it.
type T interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Start serves a registry until the test ends.
func Start(t T) *Registry {
	t.Helper()
	host, stop, err := Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &Registry{Host: host, t: t}
}

// Push pushes a random image as repoAndTag and returns its full reference
// and digest.
func (r *Registry) Push(repoAndTag string) (ref, digest string) {
	r.t.Helper()
	digest, err := push(r.Host, repoAndTag)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.Host + "/" + repoAndTag, digest
}
