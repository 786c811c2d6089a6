package lifecycle

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultConfigMapTTL bounds how stale an artifact repository ConfigMap may
// be: an edit reaches new operations within this time.
const defaultConfigMapTTL = 10 * time.Second

// cachedObject is a typed API object O, through its pointer P.
type cachedObject[O any] interface {
	*O
	client.Object
	DeepCopyInto(*O)
}

// ttlReader is a client.Reader for one kind of object that remembers each
// answer (including "not found") for ttl: a burst of reads of one object
// costs one request, without watching every object of the kind in the
// cluster. Reads of other kinds, and lists, go straight to next.
type ttlReader[O any, P cachedObject[O]] struct {
	next     client.Reader
	ttl      time.Duration
	now      func() time.Time
	resource schema.GroupResource

	mu      sync.Mutex
	entries map[client.ObjectKey]ttlEntry[O]
}

type ttlEntry[O any] struct {
	obj     *O // nil: not found
	fetched time.Time
}

func newTTLReader[O any, P cachedObject[O]](next client.Reader, resource schema.GroupResource, ttl time.Duration, now func() time.Time) *ttlReader[O, P] {
	return &ttlReader[O, P]{next: next, ttl: ttl, now: now, resource: resource, entries: map[client.ObjectKey]ttlEntry[O]{}}
}

// configMapReader caches artifact repository ConfigMaps.
type configMapReader = ttlReader[corev1.ConfigMap, *corev1.ConfigMap]

func newConfigMapReader(next client.Reader, ttl time.Duration, now func() time.Time) *configMapReader {
	return newTTLReader[corev1.ConfigMap](next, corev1.Resource("configmaps"), ttl, now)
}

func (c *ttlReader[O, P]) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	target, ok := obj.(P)
	if !ok {
		return c.next.Get(ctx, key, obj, opts...)
	}
	c.mu.Lock()
	e, hit := c.entries[key]
	c.mu.Unlock()
	if !hit || c.now().Sub(e.fetched) > c.ttl {
		// Timed from before the request, and kept only if no later request
		// stored its answer first: an answer is never older than it claims.
		asked := c.now()
		fetched := P(new(O))
		err := c.next.Get(ctx, key, fetched, opts...)
		e = ttlEntry[O]{obj: (*O)(fetched), fetched: asked}
		switch {
		case apierrors.IsNotFound(err):
			e.obj = nil
		case err != nil:
			return err
		}
		c.mu.Lock()
		if current, ok := c.entries[key]; !ok || current.fetched.Before(asked) {
			c.entries[key] = e
		}
		c.mu.Unlock()
	}
	if e.obj == nil {
		return apierrors.NewNotFound(c.resource, key.Name)
	}
	P(e.obj).DeepCopyInto((*O)(target))
	return nil
}

func (c *ttlReader[O, P]) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.next.List(ctx, list, opts...)
}
