package eventserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Limits bounds the work /events takes on, so that a flood of requests
// with bad tokens can neither pile up goroutines and TokenReviews nor
// delay the completions of provider services whose tokens are known.
// A zero field takes its default.
//
// A request passes through lanes, each with slots (working) and a queue
// of queuePerSlot requests per slot (waiting at most Wait for a slot):
//
//   - its body is read and decoded first, outside every lane: the
//     audience, and so what the cache knows of the token, comes from the
//     body, and a slow sender (bounded by MaxBody and the server's
//     ReadTimeout) then holds only its own connection, never a slot;
//   - a token reviewed valid less than CacheTTL ago skips the review
//     lanes altogether;
//   - a token reviewed valid before (up to RememberFor, never past its
//     expiry) is reviewed again in the familiar lane (FamiliarReviews):
//     strangers' tokens never enter it;
//   - any other token is reviewed in the unknown lane (Reviews): that is
//     where a flood of bad tokens waits, and is refused;
//   - only authenticated callers then enter the applying lane (Applying)
//     that reads the Provider and writes status.
//
// A request that finds a lane's queue full is refused at once; one that
// waits longer than Wait is refused then: 503 with Retry-After.
type Limits struct {
	// Reviews: TokenReviews in flight for tokens the cache does not know.
	Reviews int
	// FamiliarReviews: TokenReviews in flight for tokens reviewed valid
	// before whose cache entry has gone stale.
	FamiliarReviews int
	// Applying: authenticated requests reading and writing at once.
	Applying int
	// Wait: how long a request waits for a slot before 503.
	Wait time.Duration
	// RetryAfter: what a 503 tells the caller to wait.
	RetryAfter time.Duration
	// ReviewTimeout bounds one TokenReview, so that a slow API server
	// cannot hold a slot forever.
	ReviewTimeout time.Duration
	// CacheTTL: how long a successful review answers for its token and
	// audience without asking the API server again (never past the
	// token's expiry). It is also how long a token keeps working here
	// after its service account (or pod) is deleted: short.
	CacheTTL time.Duration
	// RememberFor: how long a token reviewed valid keeps its place in the
	// familiar lane (never past its expiry). Projected tokens live an hour
	// by default.
	RememberFor time.Duration
	// CacheSize: entries at most; the oldest go first.
	CacheSize int
}

// queuePerSlot: requests that may wait per slot of a lane. Enough to ride
// out a burst of Wait; beyond it waiting would only end in 503 anyway.
const queuePerSlot = 4

func (l Limits) withDefaults() Limits {
	orInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	orDuration := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	orInt(&l.Reviews, 16)
	orInt(&l.FamiliarReviews, 4)
	orInt(&l.Applying, 16)
	orInt(&l.CacheSize, 4096)
	orDuration(&l.Wait, time.Second)
	orDuration(&l.RetryAfter, 2*time.Second)
	orDuration(&l.ReviewTimeout, 10*time.Second)
	orDuration(&l.CacheTTL, 30*time.Second)
	orDuration(&l.RememberFor, time.Hour)
	return l
}

var (
	tokenCacheLookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_tekton_operator_events_token_cache_total",
		Help: "Tokens posted to /events, by what the TokenReview cache knew: hit (no TokenReview), " +
			"familiar (reviewed valid before, reviewed again) or miss.",
	}, []string{"result"})
	refusedBusy = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kfp_tekton_operator_events_refused_busy_total",
		Help: "Requests to /events answered 503 because the lane they needed was full, by lane.",
	}, []string{"lane"})
)

func init() { metrics.Registry.MustRegister(tokenCacheLookups, refusedBusy) }

// lane admits at most slots requests at once and queue more waiting.
type lane struct {
	name string
	// why it was full, for the 503's message.
	busyWith string
	// admitted holds a token per request in the lane, working or waiting.
	admitted chan struct{}
	// working holds a token per request in a slot.
	working chan struct{}
}

func newLane(name, busyWith string, slots int) *lane {
	return &lane{name: name, busyWith: busyWith,
		admitted: make(chan struct{}, slots*(1+queuePerSlot)), working: make(chan struct{}, slots)}
}

// enter waits up to wait for a slot and returns the function that frees
// it, or the 503 that refuses the request.
func (l *lane) enter(ctx context.Context, wait, retryAfter time.Duration) (leave func(), err error) {
	select {
	case l.admitted <- struct{}{}:
	default:
		return nil, l.refuse(retryAfter)
	}
	select {
	case l.working <- struct{}{}:
		return l.leave, nil
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case l.working <- struct{}{}:
		return l.leave, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	<-l.admitted
	return nil, l.refuse(retryAfter)
}

func (l *lane) leave() {
	<-l.working
	<-l.admitted
}

func (l *lane) refuse(retryAfter time.Duration) error {
	refusedBusy.WithLabelValues(l.name).Inc()
	seconds := retryAfterSeconds(retryAfter)
	return answer{code: http.StatusServiceUnavailable, retryAfter: seconds,
		msg: fmt.Sprintf("the operator is busy %s; retry in %d s", l.busyWith, seconds)}
}

// retryAfterSeconds is d as Retry-After's whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
