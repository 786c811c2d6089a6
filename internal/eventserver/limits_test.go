package eventserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

const (
	providerAudience = "kfp-tekton-operator/team-a/kfp"
	providerAccount  = "system:serviceaccount:team-a:kfp-provider"
	// absentRunEvent passes authentication and authorisation and then
	// finds no Run: 410, without writing anything.
	absentRunEvent = `{"status":"succeeded","runName":"team-a/absent","runId":"b-1","provider":"team-a/kfp"}`
)

// fakeAPIServer answers TokenReviews: tokens in valid are the accounts
// named, any other is not authenticated. A review of a token held waits
// until release (or its request ends), as a slow API server would.
type fakeAPIServer struct {
	valid map[string]string
	held  func(token string) bool

	releaseOnce sync.Once
	released    chan struct{}

	reviews, inFlight, maxInFlight atomic.Int64
}

func newFakeAPIServer(valid map[string]string, held func(string) bool) *fakeAPIServer {
	if held == nil {
		held = func(string) bool { return false }
	}
	return &fakeAPIServer{valid: valid, held: held, released: make(chan struct{})}
}

func (f *fakeAPIServer) release() { f.releaseOnce.Do(func() { close(f.released) }) }

func (f *fakeAPIServer) create(ctx context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
	review, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return fmt.Errorf("the fake API server creates TokenReviews only, not %T", obj)
	}
	f.reviews.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.maxInFlight.Load(); n > m && !f.maxInFlight.CompareAndSwap(m, n); m = f.maxInFlight.Load() {
	}
	if f.held(review.Spec.Token) {
		select {
		case <-f.released:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if user, ok := f.valid[review.Spec.Token]; ok {
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: review.Spec.Audiences,
			User: authenticationv1.UserInfo{Username: user}}
	}
	return nil
}

// newHandler serves Provider team-a/kfp (reporting as kfp-provider) and
// no Run, with api answering TokenReviews.
func newHandler(t *testing.T, api *fakeAPIServer, limits Limits, clock *fakeClock) *Handler {
	t.Helper()
	t.Cleanup(api.release) // never leave a request of the test hanging
	s := runtime.NewScheme()
	require.NoError(t, pipelinesv1beta1.AddToScheme(s))
	provider := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{ServiceAccount: "kfp-provider"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(provider).
		WithInterceptorFuncs(interceptor.Funcs{Create: api.create}).Build()
	return &Handler{Client: c, Audience: "kfp-tekton-operator", Limits: limits, Now: clock.Now}
}

func post(h *Handler, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/events", strings.NewReader(absentRunEvent))
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// postAll posts every token at once and returns a channel of the answers
// (closed when all are in).
func postAll(h *Handler, tokens []string) <-chan *httptest.ResponseRecorder {
	answers := make(chan *httptest.ResponseRecorder, len(tokens))
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Go(func() { answers <- post(h, tok) })
	}
	go func() { wg.Wait(); close(answers) }()
	return answers
}

func tokens(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func TestACachedReviewSparesTheAPIServer(t *testing.T) {
	clock := newFakeClock()
	api := newFakeAPIServer(map[string]string{"provider-token": providerAccount}, nil)
	h := newHandler(t, api, Limits{}, clock)
	hits, misses := testutil.ToFloat64(tokenCacheLookups.WithLabelValues("hit")), testutil.ToFloat64(tokenCacheLookups.WithLabelValues("miss"))

	for range 3 {
		w := post(h, "provider-token")
		require.Equal(t, http.StatusGone, w.Code, w.Body.String())
		assert.Contains(t, w.Body.String(), "no Run team-a/absent", "authenticated and authorised")
	}
	assert.EqualValues(t, 1, api.reviews.Load(), "one TokenReview for three posts")
	assert.Equal(t, hits+2, testutil.ToFloat64(tokenCacheLookups.WithLabelValues("hit")))
	assert.Equal(t, misses+1, testutil.ToFloat64(tokenCacheLookups.WithLabelValues("miss")))

	// The same token for another audience is another question.
	_, err := h.authenticate(context.Background(), "provider-token", "kfp-tekton-operator/team-a/other")
	require.NoError(t, err)
	assert.EqualValues(t, 2, api.reviews.Load())
}

func TestRefusedTokensAreNotCached(t *testing.T) {
	api := newFakeAPIServer(map[string]string{"not-an-account": "alice"}, nil)
	h := newHandler(t, api, Limits{}, newFakeClock())
	for _, tc := range []struct {
		token string
		code  int
		says  string
	}{
		{"random", http.StatusUnauthorized, "not valid for audience"},
		{"not-an-account", http.StatusForbidden, "alice is not a service account"},
	} {
		for range 2 {
			w := post(h, tc.token)
			assert.Equal(t, tc.code, w.Code, w.Body.String())
			assert.Contains(t, w.Body.String(), tc.says)
		}
	}
	assert.EqualValues(t, 4, api.reviews.Load(), "every refused token is reviewed each time")
	assert.Zero(t, h.guarded().reviews.len())
}

func TestCachedReviewsExpire(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token func(now time.Time) string
		// after: how long after the first review the token is posted again.
		after time.Duration
		// reviews: TokenReviews in all; how the cache knew the token.
		reviews int64
		known   standing
	}{
		{"within the TTL", func(time.Time) string { return "provider-token" }, 29 * time.Second, 1, fresh},
		{"past the TTL: reviewed again as familiar", func(time.Time) string { return "provider-token" }, 30 * time.Second, 2, familiar},
		{"past the token's expiry, within the TTL: reviewed again as unknown", func(now time.Time) string {
			return jwtExpiring(fmt.Sprint(now.Add(10 * time.Second).Unix()))
		}, 10 * time.Second, 2, unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			token := tc.token(clock.Now())
			api := newFakeAPIServer(map[string]string{token: providerAccount}, nil)
			h := newHandler(t, api, Limits{CacheTTL: 30 * time.Second}, clock)
			require.Equal(t, http.StatusGone, post(h, token).Code)

			clock.advance(tc.after)
			_, known := h.guarded().reviews.lookup(keyOf(token, providerAudience))
			assert.Equal(t, tc.known, known)
			w := post(h, token)
			require.Equal(t, http.StatusGone, w.Code, w.Body.String())
			assert.Equal(t, tc.reviews, api.reviews.Load())
		})
	}
}

func TestReviewsInFlightAreBounded(t *testing.T) {
	const slots = 3
	flood := tokens("valid", slots*(1+queuePerSlot)) // exactly what the lane admits
	valid := map[string]string{}
	for _, tok := range flood {
		valid[tok] = providerAccount
	}
	api := newFakeAPIServer(valid, func(string) bool { return true })
	h := newHandler(t, api, Limits{Reviews: slots, Wait: time.Minute}, newFakeClock())

	answers := postAll(h, flood)
	require.Eventually(t, func() bool {
		return api.inFlight.Load() == slots && len(h.guarded().unknownTokens.admitted) == len(flood)
	}, 5*time.Second, time.Millisecond, "the slots taken, the rest queued")
	time.Sleep(50 * time.Millisecond) // room for a broken bound to show
	assert.EqualValues(t, slots, api.maxInFlight.Load())

	api.release()
	for w := range answers {
		assert.Equal(t, http.StatusGone, w.Code, w.Body.String())
	}
	assert.EqualValues(t, slots, api.maxInFlight.Load(), "never more than %d reviews at once", slots)
	assert.EqualValues(t, len(flood), api.reviews.Load())
}

func TestAKnownCallerIsServedWhileAFloodHoldsTheReviews(t *testing.T) {
	const slots, retryAfter = 2, 3 * time.Second
	clock := newFakeClock()
	api := newFakeAPIServer(map[string]string{"provider-token": providerAccount},
		func(token string) bool { return strings.HasPrefix(token, "flood") })
	h := newHandler(t, api, Limits{Reviews: slots, FamiliarReviews: 1, Wait: 10 * time.Second, RetryAfter: retryAfter,
		CacheTTL: 30 * time.Second}, clock)
	require.Equal(t, http.StatusGone, post(h, "provider-token").Code, "the provider service posted once")

	flood := postAll(h, tokens("flood", slots*(1+queuePerSlot)))
	require.Eventually(t, func() bool {
		return api.inFlight.Load() == slots && len(h.guarded().unknownTokens.admitted) == slots*(1+queuePerSlot)
	}, 5*time.Second, time.Millisecond, "the flood holds every review slot and fills the queue")

	t.Run("one more bad token is refused at once", func(t *testing.T) {
		refused := testutil.ToFloat64(refusedBusy.WithLabelValues("unknown-tokens"))
		started := time.Now()
		w := post(h, "flood-one-more")
		assert.Less(t, time.Since(started), time.Second)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "3", w.Header().Get("Retry-After"))
		assert.Contains(t, w.Body.String(), "busy checking the tokens of other callers; retry in 3 s")
		assert.Equal(t, refused+1, testutil.ToFloat64(refusedBusy.WithLabelValues("unknown-tokens")))
	})
	t.Run("the cached token is served", func(t *testing.T) {
		w := post(h, "provider-token")
		assert.Equal(t, http.StatusGone, w.Code, w.Body.String())
	})
	t.Run("the token is reviewed again past the TTL, in the familiar lane", func(t *testing.T) {
		reviews := api.reviews.Load()
		clock.advance(31 * time.Second)
		w := post(h, "provider-token")
		assert.Equal(t, http.StatusGone, w.Code, w.Body.String())
		assert.Equal(t, reviews+1, api.reviews.Load())
	})

	api.release()
	for w := range flood {
		assert.Equal(t, http.StatusUnauthorized, w.Code, w.Body.String())
	}
}

func TestAWaitForAReviewEndsIn503(t *testing.T) {
	api := newFakeAPIServer(nil, func(string) bool { return true })
	const wait = 50 * time.Millisecond
	h := newHandler(t, api, Limits{Reviews: 1, Wait: wait}, newFakeClock())
	holding := postAll(h, []string{"holding"})
	require.Eventually(t, func() bool { return api.inFlight.Load() == 1 }, 5*time.Second, time.Millisecond)

	started := time.Now()
	w := post(h, "waiting")
	assert.GreaterOrEqual(t, time.Since(started), wait, "it waited for a slot")
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, w.Body.String())
	assert.Equal(t, "2", w.Header().Get("Retry-After"), "the default")
	assert.Len(t, h.guarded().unknownTokens.admitted, 1, "the refused request left the queue")

	api.release()
	assert.Equal(t, http.StatusUnauthorized, (<-holding).Code)
}

func TestLane(t *testing.T) {
	ctx := context.Background()
	l := newLane("test", "testing", 1)
	leave, err := l.enter(ctx, time.Minute, time.Second)
	require.NoError(t, err)

	// A slot frees while another waits: it gets it.
	go func() { time.Sleep(20 * time.Millisecond); leave() }()
	leave, err = l.enter(ctx, time.Minute, time.Second)
	require.NoError(t, err)
	// The first leave frees its working slot, then its admission: wait
	// for the second too.
	require.Eventually(t, func() bool { return len(l.admitted) == 1 }, 5*time.Second, time.Millisecond)

	// Its caller gone, a waiting request leaves the queue.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	_, err = l.enter(gone, time.Minute, time.Second)
	assert.Equal(t, http.StatusServiceUnavailable, code(err))
	assert.Len(t, l.admitted, 1)

	// A full queue refuses at once.
	queued, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	for range queuePerSlot {
		go func() { _, _ = l.enter(queued, time.Minute, time.Second) }()
	}
	require.Eventually(t, func() bool { return len(l.admitted) == 1+queuePerSlot }, 5*time.Second, time.Millisecond)
	started := time.Now()
	_, err = l.enter(ctx, time.Minute, 1500*time.Millisecond)
	assert.Less(t, time.Since(started), time.Second)
	var a answer
	require.ErrorAs(t, err, &a)
	assert.Equal(t, http.StatusServiceUnavailable, a.code)
	assert.Equal(t, 2, a.retryAfter, "rounded up to whole seconds")
	stopWaiting()
	require.Eventually(t, func() bool { return len(l.admitted) == 1 }, 5*time.Second, time.Millisecond, "the waiting left")
	leave()
	assert.Empty(t, l.admitted)
}
