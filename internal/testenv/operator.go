package testenv

import (
	"context"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// TestOperatorNamespace is where in-process test operators keep their
// seal key's Secret.
const TestOperatorNamespace = "default"

// SealKey is the key the test operators of this control plane seal their
// records with, for tests that write a record as the operator would.
func (cp *ControlPlane) SealKey(t T) *seal.Key {
	t.Helper()
	key, err := seal.LoadOrCreate(context.Background(), cp.Client,
		types.NamespacedName{Namespace: TestOperatorNamespace, Name: operator.SealKeySecret})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestOperatorConfig is the operator's defaults (operator.Default: the
// in-flight limit and run pruning on, as in production) with what an
// in-process test operator needs, then configure's changes (nil: none):
// no metrics, probe or events listeners, a generous client limit and fewer workers
// (several operators share a small machine), quick rechecks, and a helper
// image name (never pulled here).
func TestOperatorConfig(configure func(*operator.Config)) operator.Config {
	cfg := operator.Default()
	// No listener: test packages run in parallel, each with operators.
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.EventsBindAddress, cfg.SkipNameValidation = "0", "0", "0", true
	cfg.KubeAPIQPS, cfg.KubeAPIBurst = 500, 1000
	cfg.MaxConcurrentReconciles = 2
	cfg.RetryAfter = metav1.Duration{Duration: 200 * time.Millisecond}
	cfg.HelperImage = "example.com/kfp-tekton-operator:test"
	cfg.Namespace = TestOperatorNamespace
	cfg.EventsURL = "http://kfp-tekton-operator-events.kfp-tekton-operator.svc/events"
	if configure != nil {
		configure(&cfg)
	}
	return cfg
}

// RunOperator runs the operator's manager, assembled as cmd/operator does,
// against the control plane until the test ends or stop is called, with
// TestOperatorConfig(configure).
func (cp *ControlPlane) RunOperator(t T, configure func(*operator.Config)) (stop func()) {
	t.Helper()
	return cp.RunOperatorWrapped(t, configure, nil)
}

// RunOperatorWrapped is RunOperator with the operator's transport wrapped
// by wrap (nil: not wrapped), to see the requests it makes (Writes.Wrap).
func (cp *ControlPlane) RunOperatorWrapped(t T, configure func(*operator.Config), wrap func(http.RoundTripper) http.RoundTripper) (stop func()) {
	t.Helper()
	restConfig := cp.Config
	if wrap != nil {
		restConfig = rest.CopyConfig(cp.Config)
		restConfig.Wrap(wrap)
	}
	mgr, err := operator.NewManager(restConfig, TestOperatorConfig(configure), "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
