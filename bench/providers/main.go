// Command providers-bench measures the Provider controller on the local
// control plane: N Providers across M namespaces, from creation until every
// one is Ready. It prints the time, the API requests the operator made per
// Provider, and the operator's peak heap. It asserts nothing.
//
//	go run ./bench/providers -providers 500 -namespaces 100
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
)

func main() {
	providers := flag.Int("providers", 500, "Providers to create")
	namespaces := flag.Int("namespaces", 100, "namespaces they are spread over")
	concurrency := flag.Int("max-concurrent-reconciles", 4, "operator reconcile concurrency")
	qps := flag.Float64("kube-api-qps", 50, "operator client-side request limit (the chart's default)")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := run(*providers, *namespaces, *concurrency, float32(*qps)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// countingTransport counts the operator's requests to the API server.
type countingTransport struct {
	next  http.RoundTripper
	count *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.count.Add(1)
	return c.next.RoundTrip(r)
}

func run(nProviders, nNamespaces, concurrency int, qps float32) error {
	cp, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	host, stop, err := registry.Serve("bench/provider:v1")
	if err != nil {
		return err
	}
	defer stop()
	image := host + "/bench/provider:v1"

	ctx := context.Background()
	for i := 0; i < nNamespaces; i++ {
		ns := fmt.Sprintf("bench-%d", i)
		if err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
		if err := cp.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kfp-provider"}}); err != nil {
			return err
		}
	}

	var requests atomic.Int64
	cfg := rest.CopyConfig(cp.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &requests} }
	opCfg := operator.Default()
	opCfg.MetricsBindAddress, opCfg.HealthProbeBindAddress, opCfg.KubeAPIQPS, opCfg.KubeAPIBurst = "0", "0", qps, int(2*qps)
	opCfg.MaxConcurrentReconciles, opCfg.RetryAfter = concurrency, metav1.Duration{Duration: time.Second}
	mgr, err := operator.NewManager(cfg, opCfg, "bench")
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = mgr.Start(runCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("operator cache did not sync")
	}
	var peakHeap atomic.Uint64
	stopSampling := sampleHeap(&peakHeap)
	startRequests := requests.Load()

	start := time.Now()
	for i := 0; i < nProviders; i++ {
		p := &pipelinesv1beta1.Provider{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("bench-%d", i%nNamespaces), Name: fmt.Sprintf("p-%d", i)},
			Spec:       pipelinesv1beta1.ProviderSpec{Image: image, ServiceAccount: "kfp-provider"},
		}
		if err := cp.Client.Create(ctx, p); err != nil {
			return err
		}
	}
	created := time.Since(start)
	if err := waitProvidersReady(ctx, cp.Client, nProviders, start); err != nil {
		return err
	}
	elapsed := time.Since(start)
	stopSampling()
	made := requests.Load() - startRequests

	fmt.Printf("providers:            %d in %d namespaces (operator: %d concurrent reconciles, client limit %g qps)\n",
		nProviders, nNamespaces, concurrency, qps)
	fmt.Printf("created in:           %v\n", created.Round(time.Millisecond))
	fmt.Printf("all Ready after:      %v (%.1f ms per Provider)\n", elapsed.Round(time.Millisecond), float64(elapsed.Milliseconds())/float64(nProviders))
	fmt.Printf("operator requests:    %d (%.1f per Provider; %d shared Tasks per namespace)\n", made, float64(made)/float64(nProviders), 12)
	fmt.Printf("peak Go heap:         %.0f MiB (operator and this program's client, one process)\n", float64(peakHeap.Load())/(1<<20))
	return nil
}

// waitProvidersReady waits until n Providers are Ready, at most 10 minutes
// after start.
func waitProvidersReady(ctx context.Context, c client.Client, n int, start time.Time) error {
	for {
		list := &pipelinesv1beta1.ProviderList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		ready := 0
		for _, p := range list.Items {
			if meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady) {
				ready++
			}
		}
		if ready == n {
			return nil
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("only %d of %d Providers Ready after 10 minutes", ready, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sampleHeap(peak *atomic.Uint64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
