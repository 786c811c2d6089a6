// Command pipelines-bench measures the resource controllers on the local
// control plane, with the operator built and run as its own process:
//
//   - N Pipelines applied → time until N PipelineRuns exist, as a ratio to
//     the time the same client settings need to create N PipelineRuns
//     directly against the same API server in the same run (1.0 = as fast
//     as creating them by hand);
//   - every PipelineRun then finished as Tekton would → time until every
//     Pipeline is Ready;
//   - the operator's peak RSS (VmHWM), its CPU seconds and its API
//     requests per Pipeline by method, from apply to Ready (writes are what
//     issue #14 item 4 asks about).
//
// It prints figures and asserts nothing.
//
//	go run ./bench/pipelines -pipelines 1000
//	go run ./bench/pipelines -pipelines 10000 -skip-direct
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/bench/internal/measure"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/generator"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

const qps = 200 // the operator's client limit, and the direct client's

func main() {
	n := flag.Int("pipelines", 1000, "Pipelines to apply")
	skipDirect := flag.Bool("skip-direct", false, "skip the direct-creation baseline")
	flag.Parse()
	if err := run(*n, *skipDirect); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(n int, skipDirect bool) error {
	ctx := context.Background()
	cp, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	host, stopRegistry, err := registry.Serve("bench/provider:v1", "bench/compiler:v1")
	if err != nil {
		return err
	}
	defer stopRegistry()

	ns := "bench"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kfp-provider"}},
	} {
		if err := cp.Client.Create(ctx, obj); err != nil {
			return err
		}
	}
	// The same client settings for the direct baseline as the operator gets.
	clientCfg := rest.CopyConfig(cp.Config)
	clientCfg.QPS, clientCfg.Burst = qps, 2*qps
	direct, err := client.New(clientCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	var directTime time.Duration
	if !skipDirect {
		if directTime, err = createDirectly(ctx, direct, ns, n); err != nil {
			return err
		}
	}

	operator, err := startOperator(cp, host)
	if err != nil {
		return err
	}
	defer operator.stop()
	if err := createProvider(ctx, cp.Client, ns, host); err != nil {
		return err
	}
	f, err := measureOperator(ctx, cp.Client, direct, operator, ns, n)
	if err != nil {
		return err
	}
	f.print(operator, skipDirect, directTime)
	return nil
}

// createProvider creates the Provider the Pipelines name and waits for it
// to be Ready (its Tasks applied).
func createProvider(ctx context.Context, c client.Client, ns, host string) error {
	provider := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{Image: host + "/bench/provider:v1", ServiceAccount: "kfp-provider",
			Frameworks: []pipelinesv1beta1.Framework{{Name: "tfx", Image: host + "/bench/compiler:v1"}}}}
	if err := c.Create(ctx, provider); err != nil {
		return err
	}
	if err := waitFor(5*time.Minute, func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(provider), provider)
		return err == nil && meta.IsStatusConditionTrue(provider.Status.Conditions, pipelinesv1beta1.ConditionReady), nil
	}); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	return nil
}

// figures are what measureOperator measured.
type figures struct {
	n                                  int
	applied, toRuns, finished, toReady time.Duration
	cpu                                float64
	requestsBefore, requestsAfter      map[string]float64
}

// measureOperator applies n Pipelines with direct and times the operator
// (its process operator) until their PipelineRuns exist and, once the runs
// are finished, until the Pipelines are Ready.
func measureOperator(ctx context.Context, c, direct client.Client, operator *operatorProcess, ns string, n int) (figures, error) {
	f := figures{n: n}
	var err error
	if f.requestsBefore, err = operator.requests(); err != nil {
		return f, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	cpuBefore := measure.CPUSeconds(operator.pid)
	start := time.Now()
	if err := measure.Parallel(ctx, n, 16, func(i int) error {
		return direct.Create(ctx, &pipelinesv1beta1.Pipeline{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p-%d", i)},
			Spec: pipelinesv1beta1.PipelineSpec{Provider: "kfp", Image: fmt.Sprintf("example.com/p-%d:1.0", i),
				Framework: pipelinesv1beta1.PipelineFramework{Name: "tfx"}},
		})
	}); err != nil {
		return f, err
	}
	f.applied = time.Since(start)
	managed := client.MatchingLabels{contract.LabelOwnerKind: "pipeline"}
	if err := waitFor(30*time.Minute, func() (bool, error) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(tektonv1.SchemeGroupVersion.WithKind("PipelineRunList"))
		err := c.List(ctx, list, client.InNamespace(ns), managed)
		return err == nil && len(list.Items) >= n, err
	}); err != nil {
		return f, err
	}
	f.toRuns = time.Since(start)

	runs := &tektonv1.PipelineRunList{}
	if err := c.List(ctx, runs, client.InNamespace(ns), managed); err != nil {
		return f, err
	}
	finishStart := time.Now()
	if err := measure.Parallel(ctx, len(runs.Items), 16, func(i int) error { return finish(ctx, c, &runs.Items[i]) }); err != nil {
		return f, err
	}
	f.finished = time.Since(finishStart)
	if err := waitFor(30*time.Minute, func() (bool, error) { return pipelinesReady(ctx, c, ns, n) }); err != nil {
		return f, err
	}
	f.toReady = time.Since(finishStart)
	// Let the last status writes' watch events settle before counting.
	time.Sleep(2 * time.Second)
	if f.requestsAfter, err = operator.requests(); err != nil {
		return f, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	f.cpu = measure.CPUSeconds(operator.pid) - cpuBefore
	return f, nil
}

// pipelinesReady says whether all n Pipelines in ns are Ready.
func pipelinesReady(ctx context.Context, c client.Client, ns string, n int) (bool, error) {
	list := &pipelinesv1beta1.PipelineList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return false, err
	}
	ready := 0
	for _, p := range list.Items {
		if meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady) {
			ready++
		}
	}
	return ready == n, nil
}

// print prints f, with the direct baseline's time unless skipDirect.
func (f figures) print(operator *operatorProcess, skipDirect bool, directTime time.Duration) {
	n := f.n
	fmt.Printf("pipelines:                   %d (operator: own process, client limit %d qps, 4 concurrent reconciles)\n", n, qps)
	if !skipDirect {
		fmt.Printf("direct: %d PipelineRuns:   %v\n", n, directTime.Round(time.Millisecond))
	}
	fmt.Printf("applied %d Pipelines in:     %v\n", n, f.applied.Round(time.Millisecond))
	fmt.Printf("until %d PipelineRuns exist: %v", n, f.toRuns.Round(time.Millisecond))
	if !skipDirect {
		fmt.Printf("  (ratio direct/operator: %.2f)", directTime.Seconds()/f.toRuns.Seconds())
	}
	fmt.Println()
	fmt.Printf("runs finished (status patched like Tekton) in %v; all Pipelines Ready %v after that\n",
		f.finished.Round(time.Millisecond), f.toReady.Round(time.Millisecond))
	fmt.Printf("operator peak RSS:           %d MiB\n", measure.StatusKiB(operator.pid, "VmHWM")/1024)
	fmt.Printf("operator CPU:                %.1f s (%.2f ms per Pipeline)\n", f.cpu, 1000*f.cpu/float64(n))
	var methods []string
	writes, total := 0.0, 0.0
	for m := range f.requestsAfter {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	fmt.Printf("API requests per Pipeline:  ")
	for _, m := range methods {
		d := f.requestsAfter[m] - f.requestsBefore[m]
		total += d
		if m != "GET" {
			writes += d
		}
		fmt.Printf(" %s %.2f", m, d/float64(n))
	}
	fmt.Printf("; writes %.2f, all %.2f (one create through Ready; GET counts gets, lists and watches)\n", writes/float64(n), total/float64(n))
}

// createDirectly creates n PipelineRuns of the pipeline-create shape, as the
// operator would, with the same client settings: the baseline.
func createDirectly(ctx context.Context, c client.Client, ns string, n int) (time.Duration, error) {
	shape, err := pipelines.Get("kfp-pipeline-create")
	if err != nil {
		return 0, err
	}
	b := generator.NewBuilder(shape)
	prs := make([]*tektonv1.PipelineRun, n)
	for i := range prs {
		var params tektonv1.Params
		for _, p := range shape.Params {
			params = append(params, generator.StringParam(p.Name, `{"bench":"`+strconv.Itoa(i)+`"}`))
		}
		if prs[i], err = b.Build(ctx, generator.Run{Namespace: ns, Name: fmt.Sprintf("direct-%d", i),
			Labels: map[string]string{"bench": "direct"}, Params: params}); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	err = measure.Parallel(ctx, n, 16, func(i int) error { return c.Create(ctx, prs[i]) })
	return time.Since(start), err
}

func finish(ctx context.Context, c client.Client, pr *tektonv1.PipelineRun) error {
	now := metav1.Now()
	pr.Status.Conditions = duckv1.Conditions{{Type: apis.ConditionSucceeded, Status: corev1.ConditionTrue, Reason: "Succeeded",
		LastTransitionTime: apis.VolatileTime{Inner: now}}}
	pr.Status.StartTime, pr.Status.CompletionTime = &now, &now
	pr.Status.Results = []tektonv1.PipelineRunResult{{Name: taskdef.ResultProviderID, Value: *tektonv1.NewStructuredValues("id-" + pr.Name)}}
	return c.Status().Update(ctx, pr)
}

func waitFor(limit time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not done after %v", limit)
}

// startOperator builds cmd/operator and runs it against the control plane;
// peakRSS reads its high-water mark (KiB) from /proc.
func startOperator(cp *testenv.ControlPlane, registryHost string) (*operatorProcess, error) {
	dir, err := os.MkdirTemp("", "pipelines-bench")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "operator")
	build := exec.Command("go", "build", "-o", bin, "./cmd/operator")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the operator: %w: %s", err, out)
	}
	kubeconfig, err := cp.AdminKubeconfig()
	if err != nil {
		return nil, err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	metricsAddr, err := freeLoopbackAddress()
	if err != nil {
		return nil, err
	}
	// Plain HTTP on loopback: the bench reads the operator's client request counters.
	cmd := exec.Command(bin, "--kubeconfig", kubeconfigPath, "--metrics-bind-address", metricsAddr, "--metrics-insecure",
		"--health-probe-bind-address", "127.0.0.1:0",
		"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(2*qps), "--helper-image", registryHost+"/bench/provider:v1",
		"--zap-log-level", "error")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	op := &operatorProcess{pid: cmd.Process.Pid, metricsURL: "http://" + metricsAddr + "/metrics",
		stop: func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.RemoveAll(dir) }}
	return op, nil
}

// operatorProcess is the operator under measurement.
type operatorProcess struct {
	pid        int
	metricsURL string
	stop       func()
}

// requests are the operator's API requests so far, by HTTP method, from
// client-go's rest_client_requests_total (every attempt, any answer).
func (o *operatorProcess) requests() (map[string]float64, error) {
	resp, err := http.Get(o.metricsURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return measure.RequestsByMethod(resp.Body)
}

func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
