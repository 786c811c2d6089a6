// Package controlplane starts a real kube-apiserver and etcd (built from the
// Go module proxy into bin/, DESIGN §9) with this project's CRDs and Tekton's
// installed. Tests use it through envtest; cmd/localcluster keeps one running
// for kubectl.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/conversionwebhook"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/finalizerwebhook"
)

// TektonModule is the module whose config/300-crds are installed.
const TektonModule = "github.com/tektoncd/pipeline"

// ControlPlane is a running kube-apiserver and etcd with all CRDs installed.
type ControlPlane struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *k8sruntime.Scheme
	// stopConversion stops the conversion webhook served for the CRDs.
	stopConversion context.CancelFunc
}

// Start builds the binaries if bin/ lacks them, starts the control plane and
// installs the CRDs. Callers must Stop it.
func Start() (*ControlPlane, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	tektonCRDs, err := TektonCRDDir()
	if err != nil {
		return nil, err
	}
	scheme := scheme.New()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(RepoRoot(), "config", "crd", "bases"), tektonCRDs},
			ErrorIfPathMissing: true,
			Scheme:             scheme,
		},
		Scheme: scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	// Tests create many objects quickly; the client-side default (5 qps) would
	// measure the limiter rather than the code.
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	stop, err := serveWebhooks(env, scheme)
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	if err := installFinalizerWebhook(c, env.WebhookInstallOptions); err != nil {
		stop()
		return nil, errors.Join(err, env.Stop())
	}
	return &ControlPlane{Env: env, Config: cfg, Client: c, Scheme: scheme, stopConversion: stop}, nil
}

// serveWebhooks serves the CRDs' conversion webhook (the operator's own
// handler) where envtest pointed the CRDs of convertible kinds, with its
// certificate, so older versions read and write through the same
// conversion as on a cluster; and the finalizer webhook beside it, as the
// operator's chart does.
func serveWebhooks(env *envtest.Environment, scheme *k8sruntime.Scheme) (context.CancelFunc, error) {
	o := env.WebhookInstallOptions
	srv := webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
	srv.Register(conversionwebhook.Path, conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	srv.Register(finalizerwebhook.Path, finalizerwebhook.HTTPHandler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			cancel()
			return nil, fmt.Errorf("serving the conversion webhook on %s: %w", addr, err)
		default:
		}
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return cancel, nil
		}
		if time.Now().After(deadline) {
			cancel()
			return nil, fmt.Errorf("the conversion webhook is not listening on %s", addr)
		}
	}
}

// FinalizerWebhookConfiguration names the finalizer webhook's configuration
// on every test control plane; a test may delete it to see the operator
// without it. Not the chart's name: a test applying the chart must not
// merge its Service reference into this one's URL.
const FinalizerWebhookConfiguration = "kfp-tekton-operator-finalizer-envtest"

// installFinalizerWebhook registers the finalizer webhook, served by
// serveWebhooks, as the chart does: every envtest sees the operator's kinds
// created with the finalizer, as on a cluster.
func installFinalizerWebhook(c client.Client, o envtest.WebhookInstallOptions) error {
	url := "https://" + net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort)) + finalizerwebhook.Path
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: FinalizerWebhookConfiguration},
		Webhooks: []admissionregistrationv1.MutatingWebhook{finalizerwebhook.Webhook(
			admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: o.LocalServingCAData})},
	}
	if err := c.Create(context.Background(), cfg); err != nil {
		return fmt.Errorf("registering the finalizer webhook: %w", err)
	}
	return nil
}

// Stop stops the apiserver and etcd and removes their data.
func (cp *ControlPlane) Stop() error {
	if cp.stopConversion != nil {
		cp.stopConversion()
	}
	return cp.Env.Stop()
}

// AdminKubeconfig returns a kubeconfig for a cluster-admin user.
func (cp *ControlPlane) AdminKubeconfig() ([]byte, error) {
	user, err := cp.Env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// RepoRoot is the directory holding this project's go.mod.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var buildOnce sync.Once

// AssetsDir returns KUBEBUILDER_ASSETS, or bin/ after building the binaries
// there if missing (hack/build-cluster.sh holds a lock, so parallel
// test packages build once).
func AssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" && hasBinaries(dir) {
		return dir, nil
	}
	dir := filepath.Join(RepoRoot(), "bin")
	var err error
	buildOnce.Do(func() {
		if hasBinaries(dir) {
			return
		}
		cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "build-cluster.sh"), "envtest")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if runErr := cmd.Run(); runErr != nil {
			err = fmt.Errorf("building kube-apiserver and etcd into %s: %w", dir, runErr)
		}
	})
	return dir, err
}

func hasBinaries(dir string) bool {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() {
			return false
		}
	}
	return true
}

// TektonCRDDir is config/300-crds of the tektoncd/pipeline module this
// project builds against, found in the module cache.
func TektonCRDDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", TektonModule)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			err = fmt.Errorf("%w: %s", err, exitErr.Stderr)
		}
		return "", fmt.Errorf("locating module %s: %w", TektonModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache: run go mod download", TektonModule)
	}
	return filepath.Join(dir, "config", "300-crds"), nil
}
