package eventserver

import (
	"encoding/base64"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// jwtExpiring is a token shaped like a service-account token whose exp
// claim is exp (the signature is not checked here: the API server did).
func jwtExpiring(exp string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(`{"sub":"system:serviceaccount:team-a:kfp-provider","exp":`+exp+`}`)) + ".c2lnbmF0dXJl"
}

func TestTokenExpiry(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		want        time.Time
	}{
		{"a service-account token", jwtExpiring("1796119200"), time.Unix(1796119200, 0)},
		{"a fractional NumericDate", jwtExpiring("1796119200.75"), time.Unix(1796119200, 0)},
		{"no exp claim", jwtExpiring("null"), time.Time{}},
		{"a negative exp", jwtExpiring("-5"), time.Time{}},
		{"not a JWT", "garbage", time.Time{}},
		{"not base64", "a.!!!.c", time.Time{}},
		{"not JSON", "a." + base64.RawURLEncoding.EncodeToString([]byte("{")) + ".c", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tokenExpiry(tc.token))
		})
	}
}

func TestKeysNeverConfuseTokenAndAudience(t *testing.T) {
	assert.NotEqual(t, keyOf("ab", "c"), keyOf("a", "bc"))
	assert.NotEqual(t, keyOf("t", "team-a"), keyOf("t", "team-b"))
	assert.Equal(t, keyOf("t", "team-a"), keyOf("t", "team-a"))
}

func TestReviewCacheStanding(t *testing.T) {
	const ttl, rememberFor = 30 * time.Second, time.Hour
	caller := types.NamespacedName{Namespace: "team-a", Name: "kfp-provider"}
	type at struct {
		after time.Duration
		want  standing
	}
	for _, tc := range []struct {
		name string
		// expiresIn is the token's own remaining life; 0: unknown.
		expiresIn time.Duration
		checks    []at
	}{
		{"no known expiry: fresh for the TTL, then familiar for an hour", 0,
			[]at{{0, fresh}, {ttl - time.Second, fresh}, {ttl, familiar}, {rememberFor - time.Second, familiar}, {rememberFor, unknown}}},
		{"a token expiring before the TTL is never kept past its expiry", 10 * time.Second,
			[]at{{9 * time.Second, fresh}, {10 * time.Second, unknown}}},
		{"a token expiring after the TTL is familiar until its expiry", 10 * time.Minute,
			[]at{{ttl - time.Second, fresh}, {ttl, familiar}, {10*time.Minute - time.Second, familiar}, {10 * time.Minute, unknown}}},
		{"an expired token is not kept", -time.Second, []at{{0, unknown}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			start := clock.Now()
			c := newReviewCache(8, ttl, rememberFor, clock.Now)
			expiry := time.Time{}
			if tc.expiresIn != 0 {
				expiry = start.Add(tc.expiresIn)
			}
			k := keyOf("token", "aud")
			c.store(k, caller, expiry)
			for _, check := range tc.checks {
				clock.advance(start.Add(check.after).Sub(clock.Now()))
				got, standing := c.lookup(k)
				assert.Equal(t, check.want, standing, "after %s", check.after)
				if standing == fresh {
					assert.Equal(t, caller, got)
				}
			}
		})
	}
}

func TestReviewCacheEvictsTheOldest(t *testing.T) {
	clock := newFakeClock()
	c := newReviewCache(2, time.Minute, time.Hour, clock.Now)
	caller := types.NamespacedName{Namespace: "team-a", Name: "kfp-provider"}
	c.store(keyOf("first", "aud"), caller, time.Time{})
	c.store(keyOf("second", "aud"), caller, time.Time{})
	c.store(keyOf("first", "aud"), caller, time.Time{}) // reviewed again: now the newest
	c.store(keyOf("third", "aud"), caller, time.Time{})
	assert.Equal(t, 2, c.len())
	_, second := c.lookup(keyOf("second", "aud"))
	_, first := c.lookup(keyOf("first", "aud"))
	_, third := c.lookup(keyOf("third", "aud"))
	assert.Equal(t, []standing{unknown, fresh, fresh}, []standing{second, first, third})

	c.forget(keyOf("first", "aud"))
	_, first = c.lookup(keyOf("first", "aud"))
	assert.Equal(t, unknown, first)
}

func TestReviewCacheIsSafeForConcurrentUse(t *testing.T) {
	// Meaningful under -race; otherwise it checks the bound holds.
	clock := newFakeClock()
	c := newReviewCache(64, time.Minute, time.Hour, clock.Now)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k := keyOf(fmt.Sprint(w, "/", i%100), "aud")
				c.store(k, types.NamespacedName{Namespace: "ns", Name: "sa"}, time.Time{})
				c.lookup(k)
				if i%7 == 0 {
					c.forget(k)
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, c.len(), 64)
}
