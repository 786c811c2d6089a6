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

// TestOperatorConfig is cfg with what every in-process test operator needs:
// no metrics or probe listeners, a generous client limit, quick retries,
// and a helper image name (never pulled here).
func TestOperatorConfig(cfg operator.Config) operator.Config {
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.SkipNameValidation = "0", "0", true
	if cfg.KubeAPIQPS == 0 {
		cfg.KubeAPIQPS, cfg.KubeAPIBurst = 500, 1000
	}
	if cfg.MaxConcurrentReconciles == 0 {
		cfg.MaxConcurrentReconciles = 2
	}
	if cfg.RetryAfter.Duration == 0 {
		cfg.RetryAfter = metav1.Duration{Duration: 200 * time.Millisecond}
	}
	if cfg.HelperImage == "" {
		cfg.HelperImage = "example.com/kfp-tekton-operator:test"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = TestOperatorNamespace
	}
	if cfg.EventsURL == "" {
		cfg.EventsURL = "http://kfp-tekton-operator-events.kfp-tekton-operator.svc/events"
	}
	return cfg
}

// RunOperator runs the operator's manager, assembled as cmd/operator does,
// against the control plane until the test ends or stop is called.
func (cp *ControlPlane) RunOperator(t T, cfg operator.Config) (stop func()) {
	t.Helper()
	return cp.RunOperatorWrapped(t, cfg, nil)
}

// RunOperatorWrapped is RunOperator with the operator's transport wrapped
// by wrap (nil: not wrapped), to see the requests it makes (Writes.Wrap).
func (cp *ControlPlane) RunOperatorWrapped(t T, cfg operator.Config, wrap func(http.RoundTripper) http.RoundTripper) (stop func()) {
	t.Helper()
	restConfig := cp.Config
	if wrap != nil {
		restConfig = rest.CopyConfig(cp.Config)
		restConfig.Wrap(wrap)
	}
	mgr, err := operator.NewManager(restConfig, TestOperatorConfig(cfg), "test")
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
