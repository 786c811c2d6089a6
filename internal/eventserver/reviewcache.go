package eventserver

import (
	"container/list"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// reviewKey names a (token, audience) pair without holding the token: a
// memory dump or a debugger shows hashes, never a credential.
type reviewKey [sha256.Size]byte

func keyOf(token, audience string) reviewKey {
	h := sha256.New()
	// The token's length first, so that no two pairs concatenate alike
	// ("ab"+"c" and "a"+"bc").
	_ = binary.Write(h, binary.BigEndian, uint64(len(token)))
	h.Write([]byte(token))
	h.Write([]byte(audience))
	var k reviewKey
	h.Sum(k[:0])
	return k
}

// standing is what the cache knows of a (token, audience) pair.
type standing int

const (
	// unknown: never seen valid (or forgotten); its TokenReview waits
	// with everyone else's.
	unknown standing = iota
	// fresh: reviewed valid less than the TTL ago; no TokenReview needed.
	fresh
	// familiar: reviewed valid before, but longer ago than the TTL. It
	// is reviewed again (the service account may be gone), in lanes that
	// a flood of strangers' tokens cannot fill.
	familiar
)

// reviewCache remembers successful TokenReviews for a short while.
//
// Only successes are kept. A flood of random tokens never repeats one, so
// caching failures would not spare a single review; it would only fill
// the bounded cache with junk and evict the entries of the provider
// services the cache is there for. A caller retrying one bad token is
// held back by the review lanes instead. Errors of the API server are
// never kept either: they say nothing about the token.
type reviewCache struct {
	now func() time.Time
	// ttl bounds how long a review answers without asking again: a
	// deleted service account's token keeps working that long here.
	ttl time.Duration
	// rememberFor bounds how long a pair stays familiar.
	rememberFor time.Duration
	size        int

	mu      sync.Mutex
	entries map[reviewKey]*list.Element // of *reviewed
	order   *list.List                  // oldest first, for eviction
}

type reviewed struct {
	key    reviewKey
	caller types.NamespacedName
	// freshUntil: answers without a TokenReview before this.
	freshUntil time.Time
	// familiarUntil: the entry is dropped at this time.
	familiarUntil time.Time
}

func newReviewCache(size int, ttl, rememberFor time.Duration, now func() time.Time) *reviewCache {
	return &reviewCache{now: now, ttl: ttl, rememberFor: rememberFor, size: size,
		entries: map[reviewKey]*list.Element{}, order: list.New()}
}

// lookup says what the cache knows of k and, when fresh, who the caller is.
func (c *reviewCache) lookup(k reviewKey) (types.NamespacedName, standing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return types.NamespacedName{}, unknown
	}
	r := e.Value.(*reviewed)
	now := c.now()
	switch {
	case now.Before(r.freshUntil):
		return r.caller, fresh
	case now.Before(r.familiarUntil):
		return types.NamespacedName{}, familiar
	}
	c.remove(e)
	return types.NamespacedName{}, unknown
}

// store records that the API server accepted k for caller now. expiry is
// the token's own (zero if unknown): nothing outlives the token.
func (c *reviewCache) store(k reviewKey, caller types.NamespacedName, expiry time.Time) {
	now := c.now()
	r := &reviewed{key: k, caller: caller, freshUntil: now.Add(c.ttl), familiarUntil: now.Add(c.rememberFor)}
	if !expiry.IsZero() {
		r.freshUntil, r.familiarUntil = earliest(r.freshUntil, expiry), earliest(r.familiarUntil, expiry)
	}
	if !now.Before(r.freshUntil) {
		return // already expired: nothing to keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.remove(e)
	}
	c.entries[k] = c.order.PushBack(r)
	for c.order.Len() > c.size {
		c.remove(c.order.Front())
	}
}

// forget drops k: the API server no longer accepts it.
func (c *reviewCache) forget(k reviewKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.remove(e)
	}
}

func (c *reviewCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// remove needs c.mu held.
func (c *reviewCache) remove(e *list.Element) {
	delete(c.entries, e.Value.(*reviewed).key)
	c.order.Remove(e)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// tokenExpiry reads the exp claim of a service-account token (a JWT),
// zero when it has none or is no JWT. The claim is read without checking
// the signature, so it is trusted only after the API server has accepted
// the token, and used only to shorten how long it is cached.
func tokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		// A NumericDate: seconds, possibly fractional (RFC 7519).
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(claims.Exp), 0)
}
