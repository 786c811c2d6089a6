package lifecycle

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultConfigMapTTL bounds how stale an artifact repository ConfigMap may
// be: an edit reaches new operations within this time.
const defaultConfigMapTTL = 10 * time.Second

// configMapReader is a client.Reader for ConfigMaps that remembers each
// answer (including "not found") for ttl.
type configMapReader struct {
	next client.Reader
	ttl  time.Duration
	now  func() time.Time

	mu      sync.Mutex
	entries map[client.ObjectKey]configMapEntry
}

type configMapEntry struct {
	cm      *corev1.ConfigMap // nil: not found
	fetched time.Time
}

func newConfigMapReader(next client.Reader, ttl time.Duration, now func() time.Time) *configMapReader {
	return &configMapReader{next: next, ttl: ttl, now: now, entries: map[client.ObjectKey]configMapEntry{}}
}

func (c *configMapReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	cm, ok := obj.(*corev1.ConfigMap)
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
		fetched := &corev1.ConfigMap{}
		err := c.next.Get(ctx, key, fetched, opts...)
		switch {
		case apierrors.IsNotFound(err):
			fetched = nil
		case err != nil:
			return err
		}
		e = configMapEntry{cm: fetched, fetched: asked}
		c.mu.Lock()
		if current, ok := c.entries[key]; !ok || current.fetched.Before(asked) {
			c.entries[key] = e
		}
		c.mu.Unlock()
	}
	if e.cm == nil {
		return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	e.cm.DeepCopyInto(cm)
	return nil
}

func (c *configMapReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.next.List(ctx, list, opts...)
}
