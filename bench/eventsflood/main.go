// Command eventsflood measures whether a flood of requests with bad tokens
// delays the run completions a provider service posts to the operator's
// /events with a real token. It posts a steady stream of valid requests
// (a real service-account token; the event names a Run that does not
// exist, so each is authenticated, authorised and answered 410 without
// writing anything) in two phases: alone, then alongside a bounded flood
// of requests with random tokens shaped like service-account tokens (so
// that nothing short of a TokenReview refuses them). It prints the valid
// requests' latency (median, p90, max) per phase and the answers by code.
// It asserts nothing. Run it inside the local cluster after `make demo`:
//
//	hack/cluster.sh exec go run ./bench/eventsflood -rate 500 -duration 20s
//
// Without -token-file it asks the API server (bin/kubeconfig) for a token
// of -sa-namespace/-sa-name with the TokenRequest API.
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type options struct {
	url                string
	kubeconfig         string
	tokenFile          string
	saNamespace        string
	saName             string
	provider           string // namespace/name
	audience           string
	rate               int
	concurrency        int
	duration, interval time.Duration
	timeout            time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "http://10.96.0.50/events", "the operator's /events (hack/install-operator.sh pins its Service there)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", filepath.Join("bin", "kubeconfig"), "for the TokenRequest, without -token-file")
	flag.StringVar(&o.tokenFile, "token-file", "", "a valid token of the Provider's service account (default: request one)")
	flag.StringVar(&o.saNamespace, "sa-namespace", "team-a", "namespace of the Provider and its service account")
	flag.StringVar(&o.saName, "sa-name", "kfp-provider", "the Provider's service account")
	flag.StringVar(&o.provider, "provider", "", "the Provider the events name, namespace/name (default: <sa-namespace>/kfp)")
	flag.StringVar(&o.audience, "audience", "", "the token's audience (default: kfp-tekton-operator/<provider namespace>/<provider name>)")
	flag.IntVar(&o.rate, "rate", 500, "flood requests per second (at most; a tick finding every worker busy is skipped)")
	flag.IntVar(&o.concurrency, "concurrency", 64, "flood requests in flight at most")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "length of each phase")
	flag.DurationVar(&o.interval, "interval", 100*time.Millisecond, "pause between valid requests")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "per request")
	flag.Parse()
	if o.provider == "" {
		o.provider = o.saNamespace + "/kfp"
	}
	if o.audience == "" {
		o.audience = "kfp-tekton-operator/" + o.provider
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/eventsflood:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.rate <= 0 || o.concurrency <= 0 || o.duration <= 0 {
		return fmt.Errorf("-rate, -concurrency and -duration must be positive")
	}
	providerNS, _, ok := strings.Cut(o.provider, "/")
	if !ok {
		return fmt.Errorf("-provider %q: want namespace/name", o.provider)
	}
	token, err := validToken(o)
	if err != nil {
		return err
	}
	body := absentRunEvent(providerNS, o.provider)
	valid := poster{url: o.url, body: body, client: newClient(1, o.timeout)}
	flood := poster{url: o.url, body: body, client: newClient(o.concurrency, o.timeout)}

	// One request first: a wrong token or URL is better said now than as
	// a phase of 401s.
	if code, msg, err := valid.post(token); err != nil || code != http.StatusGone {
		return fmt.Errorf("a valid request was answered %d %q (%w): want 410, no Run %s/eventsflood-absent", code, msg, err, providerNS)
	}
	fmt.Printf("/events at %s; valid requests every %s as %s/%s; flood of %d/s, %d in flight at most; %s a phase\n",
		o.url, o.interval, o.saNamespace, o.saName, o.rate, o.concurrency, o.duration)
	for _, withFlood := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), o.duration)
		floodAnswers, skipped := &answers{}, &atomic.Int64{}
		var flooding sync.WaitGroup
		if withFlood {
			flooding.Go(func() { floodUntil(ctx, flood, o.rate, o.concurrency, floodAnswers, skipped) })
		}
		validAnswers := postValidUntil(ctx, valid, token, o.interval)
		flooding.Wait()
		cancel()
		report(withFlood, validAnswers, floodAnswers, skipped.Load(), o.duration)
	}
	return nil
}

// validToken is -token-file's, or a fresh one from the TokenRequest API
// lasting well past both phases.
func validToken(o options) (string, error) {
	if o.tokenFile != "" {
		data, err := os.ReadFile(o.tokenFile)
		return strings.TrimSpace(string(data)), err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return "", fmt.Errorf("the cluster's kubeconfig (or -token-file): %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	// 10 minutes is the least the API server issues.
	seconds := max(600, int64((2*o.duration + 5*time.Minute).Seconds()))
	tr, err := cs.CoreV1().ServiceAccounts(o.saNamespace).CreateToken(context.Background(), o.saName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{o.audience}, ExpirationSeconds: &seconds}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token of %s/%s for %s: %w", o.saNamespace, o.saName, o.audience, err)
	}
	return tr.Status.Token, nil
}

// absentRunEvent is a completion of a Run that does not exist: the
// operator answers 410 once the caller is authenticated and authorised.
func absentRunEvent(namespace, provider string) string {
	return fmt.Sprintf(`{"status":"succeeded","runName":"%s/eventsflood-absent","runId":"eventsflood","provider":%q}`, namespace, provider)
}

// badToken is random, but shaped like a service-account token (three
// base64url parts), so that only a TokenReview can refuse it.
func badToken() string {
	part := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rand.UintN(256))
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return part(36) + "." + part(180) + "." + part(256)
}

func newClient(conns int, timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost, t.MaxConnsPerHost = conns, conns
	return &http.Client{Transport: t, Timeout: timeout}
}

type poster struct {
	url, body string
	client    *http.Client
}

// post sends the event with token and returns the answer's code and
// first line.
func (p poster) post(token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(p.body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	first, _, _ := strings.Cut(string(msg), "\n")
	return resp.StatusCode, first, nil
}

// answers counts answers by code (0: no answer) and keeps latencies.
type answers struct {
	mu        sync.Mutex
	byCode    map[int]int
	latencies []time.Duration
}

func (a *answers) add(code int, took time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byCode == nil {
		a.byCode = map[int]int{}
	}
	a.byCode[code]++
	a.latencies = append(a.latencies, took)
}

// postValidUntil posts with the valid token, one at a time, interval
// apart, until ctx ends: a provider service reporting completions.
func postValidUntil(ctx context.Context, p poster, token string, interval time.Duration) *answers {
	got := &answers{}
	for ctx.Err() == nil {
		started := time.Now()
		code, _, _ := p.post(token)
		got.add(code, time.Since(started))
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
	return got
}

// floodUntil posts bad tokens at rate a second from concurrency workers
// until ctx ends. A tick finding every worker busy is skipped (and
// counted), so the flood stays bounded whatever the server does.
func floodUntil(ctx context.Context, p poster, rate, concurrency int, got *answers, skipped *atomic.Int64) {
	work := make(chan struct{})
	var workers sync.WaitGroup
	for range concurrency {
		workers.Go(func() {
			for range work {
				started := time.Now()
				code, _, _ := p.post(badToken())
				got.add(code, time.Since(started))
			}
		})
	}
	tick := time.NewTicker(max(time.Second/time.Duration(rate), time.Microsecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			close(work)
			workers.Wait()
			return
		case <-tick.C:
			select {
			case work <- struct{}{}:
			default:
				skipped.Add(1)
			}
		}
	}
}

func report(withFlood bool, valid, flood *answers, skipped int64, duration time.Duration) {
	if !withFlood {
		fmt.Println("phase 1, no flood:")
	} else {
		fmt.Println("phase 2, with the flood:")
	}
	fmt.Printf("  valid requests %5d  %s  answers %s\n", len(valid.latencies), latencies(valid.latencies), byCode(valid.byCode))
	if withFlood {
		fmt.Printf("  flood requests %5d (%.0f/s, %d ticks skipped, every worker busy)  %s  answers %s\n", len(flood.latencies),
			float64(len(flood.latencies))/duration.Seconds(), skipped, latencies(flood.latencies), byCode(flood.byCode))
	}
}

// latencies is "median … p90 … max …" of ds (sorted in place).
func latencies(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	slices.Sort(ds)
	p90 := ds[(len(ds)*9+9)/10-1] // the smallest at or above 90 % of the samples
	return fmt.Sprintf("median %7.1fms  p90 %7.1fms  max %7.1fms", ms(ds[len(ds)/2]), ms(p90), ms(ds[len(ds)-1]))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// byCode is "410×123 503×4 error×1", codes in order.
func byCode(counts map[int]int) string {
	codes := make([]int, 0, len(counts))
	for code := range counts {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	words := make([]string, 0, len(codes))
	for _, code := range codes {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "error"
		}
		words = append(words, fmt.Sprintf("%s×%d", name, counts[code]))
	}
	return strings.Join(words, " ")
}
