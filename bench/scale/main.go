// Command scale-bench measures the operator's overhead over Tekton's own
// throughput on the local cluster (issue #14, item 3), with kwok's fake node
// beside the real one so thousands of PipelineRuns can complete:
//
//  1. kwok (bin/kwok) manages one fake node; a mutating webhook the bench
//     serves for its own namespace only (steer.go) steers its TaskRun pods
//     there, so whatever else runs on the cluster (make demo) keeps the real
//     node, and kwok's stages (kwok-stages.yaml) end each pod at once with
//     the results the shared Tasks' report step would write;
//  2. direct: N copies of an operator-made experiment-create PipelineRun
//     created with the bench's client, without the operation timeout (a
//     burst keeps Tekton's own queue long enough to time runs out, and this
//     phase measures finishing) → time until Tekton has finished all;
//  3. operator: N Experiments applied → time until all are Ready;
//  4. direct, again (unless -direct-once): step 2 once more, in a namespace
//     of its own (again.go), so Tekton alone is timed before and after the
//     operator on the same cluster (-skip-operator: twice, without it, to
//     see the cluster's own drift);
//  5. the ratio of the operator phase to the direct phases' mean is the
//     operator's overhead over Tekton (1.0: the operator adds nothing), with
//     the leader's peak RSS (VmHWM), its CPU seconds and API requests per
//     Experiment, and for each phase the machine's CPU by process and
//     kube-apiserver's requests per resource.
//
// With -fairness it measures latency instead of throughput (fairness.go):
// the Provider also admits a second namespace, B; one Experiment of B alone
// (the idle baseline), then one applied as N Experiments of the bench's
// namespace end their creates, and one once the leader has queued them,
// each timed from apply to its PipelineRun created and to Ready, with the
// ratios to the baseline. The direct and operator phases do not run then.
//
// It prints figures and asserts nothing but completion. It needs the local
// cluster with the operator installed by its chart:
//
//	hack/cluster.sh up && hack/cluster.sh exec ./hack/install-operator.sh
//	hack/cluster.sh exec go run ./bench/scale -n 1000
//	hack/cluster.sh exec go run ./bench/scale -n 1000 -fairness
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/bench/internal/measure"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

//go:embed kwok-stages.yaml
var kwokStages []byte

const (
	operatorNamespace = "kfp-tekton-operator"
	leaseName         = "kfp-tekton-operator.pipelines.kubeflow.org"
	tektonNamespace   = "tekton-pipelines"
	// tektonController is the name Tekton's controller's CPU is reported under.
	tektonController = "tekton-pipelines-controller"
	// fakeNodeLabel marks the fake node (kwok manages nodes with it) and is
	// the taint only the bench's pods tolerate.
	fakeNodeLabel = "kfp-tekton.bench/kwok"
	fakeNode      = "kwok-bench"
	benchLabel    = "kfp-tekton.bench/direct"
	clientQPS     = 200
	workers       = 16 // the bench's concurrent creates
)

func main() {
	n := flag.Int("n", 1000, "PipelineRuns created directly, then Experiments applied (with -fairness: the burst's Experiments)")
	skipDirect := flag.Bool("skip-direct", false, "skip Tekton's direct baseline (both direct phases)")
	once := flag.Bool("direct-once", false, "run the direct baseline before the operator phase only, not again after it in a namespace of its own")
	skipOperator := flag.Bool("skip-operator", false, "skip the operator phase: Tekton alone twice, to see how the cluster itself drifts")
	limit := flag.Duration("timeout", 2*time.Hour, "give up on a phase after this long")
	keep := flag.Bool("keep", false, "leave the namespaces and what is in them (resources, runs, pods) behind")
	var tuning tektonTuning
	flag.IntVar(&tuning.qps, "tekton-qps", 0, "run Tekton's controller with this -kube-api-qps (it doubles it), burst twice that; 0: as installed (20 effective)")
	flag.IntVar(&tuning.threads, "tekton-threads", 0, "run Tekton's controller with this -threads-per-controller; 0: as installed (2)")
	fairness := flag.Bool("fairness", false, "instead of the direct and operator phases, time one Experiment of a second namespace (apply to PipelineRun created, and to Ready) alone, then during a burst of -n in the bench's namespace; -n must exceed the operator's maxOperationsInFlight (200) for a queue to form")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `Usage: go run ./bench/scale [flags]

Measures the operator's overhead over Tekton's own throughput with kwok's fake
node (direct PipelineRuns, then Experiments through the operator); with
-fairness, a quiet namespace's latency during another namespace's burst
instead. Run inside the local cluster's network: hack/cluster.sh exec.

Flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	throughput, err := phasesFromFlags(*skipDirect, *once, *skipOperator)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale-bench:", err)
		os.Exit(2)
	}
	if err := run(ctx, *n, throughput, *fairness, *limit, *keep, tuning); err != nil {
		fmt.Fprintln(os.Stderr, "scale-bench:", err)
		os.Exit(1)
	}
}

type bench struct {
	cfg       *rest.Config
	c         client.Client
	clientset kubernetes.Interface
	cache     cache.Cache
	ns        string
	// quietNS is the second namespace of -fairness, admitted by the
	// Provider in ns; "" without.
	quietNS string
	// againNS is the namespace of the direct phase run again after the
	// operator's; "" without.
	againNS string
	n       int
	limit   time.Duration
	// lastProgress is when a progress line was last printed.
	lastProgress time.Time
}

func run(ctx context.Context, n int, throughput phases, fairness bool, limit time.Duration, keep bool, tuning tektonTuning) error {
	root := testenv.RepoRoot()
	b, err := newBench(root, n, limit)
	if err != nil {
		return err
	}
	images, err := testenv.Images()
	if err != nil {
		return err
	}

	stopKwok, err := b.startFakeNode(ctx, root)
	if err != nil {
		return err
	}
	defer stopKwok()
	if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns, Labels: map[string]string{"scale-bench": "true"}}}); err != nil {
		return err
	}
	if !keep {
		defer b.cleanUp()
	}
	if fairness {
		if err := b.createQuietNamespace(ctx); err != nil {
			return err
		}
	} else if throughput.again {
		if err := b.createAgainNamespace(ctx); err != nil {
			return err
		}
	}
	stopSteering, err := b.steerTaskRunPods(ctx)
	if err != nil {
		return err
	}
	defer stopSteering()
	untune, err := b.tuneTekton(ctx, tuning)
	if err != nil {
		return err
	}
	defer untune()
	if err := b.provider(ctx, root, images["FIXTURE_PROVIDER_IMAGE"]); err != nil {
		return err
	}
	watched := map[string]cache.Config{b.ns: {}}
	if b.againNS != "" {
		watched[b.againNS] = cache.Config{}
	}
	if b.cache, err = cache.New(b.cfg, cache.Options{Scheme: scheme.New(), DefaultNamespaces: watched}); err != nil {
		return err
	}
	go func() { _ = b.cache.Start(ctx) }()

	// The operation shape: the PipelineRun the operator makes for one
	// Experiment (which also proves the fake node completes it).
	shape, err := b.operationShape(ctx)
	if err != nil {
		return err
	}
	if fairness {
		return b.fairness(ctx)
	}
	if b.againNS != "" {
		if err := b.copyForDirectAgain(ctx, shape); err != nil {
			return err
		}
	}
	return b.throughput(ctx, shape, throughput, tuning)
}

// newBench connects to the local cluster (its kubeconfig under root's bin/)
// for a bench of n resources in a namespace of its own.
func newBench(root string, n int, limit time.Duration) (*bench, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(root, "bin", "kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("the local cluster's kubeconfig (hack/cluster.sh up): %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, 2*clientQPS
	b := &bench{cfg: cfg, n: n, limit: limit, ns: fmt.Sprintf("scale-%d-%d", n, time.Now().Unix())}
	if b.c, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return nil, err
	}
	if b.clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return b, nil
}

// provider installs a Provider with the provider chart into the bench's namespace.
func (b *bench) provider(ctx context.Context, root, image string) error {
	args := []string{"install", "kfp", filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--kubeconfig", filepath.Join(root, "bin", "kubeconfig"), "--namespace", b.ns,
		"--set", "provider.name=kfp", "--set", "provider.image=" + image}
	if b.quietNS != "" {
		args = append(args, "--set", "provider.allowedNamespaces={"+b.quietNS+"}")
	}
	out, err := exec.CommandContext(ctx, filepath.Join(root, "bin", "helm"), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm install: %w: %s", err, out)
	}
	return b.waitFor(ctx, 2*time.Minute, "the Provider Ready", func() (bool, error) {
		p := &pipelinesv1beta1.Provider{}
		if err := b.c.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: "kfp"}, p); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady), nil
	})
}

// operationShape applies one Experiment, waits for it to be Ready through
// the fake node, and returns its PipelineRun stripped of what ties it to
// the Experiment.
func (b *bench) operationShape(ctx context.Context) (*tektonv1.PipelineRun, error) {
	e := experiment(b.ns, "shape")
	if err := b.c.Create(ctx, e); err != nil {
		return nil, err
	}
	if err := b.waitFor(ctx, 3*time.Minute, "one Experiment Ready through the fake node", func() (bool, error) {
		if err := b.c.Get(ctx, client.ObjectKeyFromObject(e), e); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(e.Status.Conditions, pipelinesv1beta1.ConditionReady), nil
	}); err != nil {
		return nil, fmt.Errorf("%w (Ready: %+v)", err, meta.FindStatusCondition(e.Status.Conditions, pipelinesv1beta1.ConditionReady))
	}
	runs := &tektonv1.PipelineRunList{}
	if err := b.c.List(ctx, runs, client.InNamespace(b.ns), client.MatchingLabels{contract.LabelOwnerName: "shape"}); err != nil {
		return nil, err
	}
	if len(runs.Items) != 1 {
		return nil, fmt.Errorf("%d PipelineRuns for one Experiment", len(runs.Items))
	}
	if e.Status.Provider.ID == "" || !strings.HasPrefix(e.Status.Provider.ID, "id-") {
		return nil, fmt.Errorf("the fake node's result did not reach the Experiment: provider id %q", e.Status.Provider.ID)
	}
	pods := &corev1.PodList{}
	if err := b.c.List(ctx, pods, client.InNamespace(b.ns)); err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != fakeNode {
			return nil, fmt.Errorf("pod %s ran on %q, not the fake node", p.Name, p.Spec.NodeName)
		}
	}
	shape := &tektonv1.PipelineRun{Spec: runs.Items[0].Spec}
	shape.Namespace = b.ns
	return shape, nil
}

// createDirectly creates N copies of shape in namespace ns with the bench's
// client and waits until Tekton has finished them all.
func (b *bench) createDirectly(ctx context.Context, shape *tektonv1.PipelineRun, ns string) (phase, error) {
	var p phase
	start := time.Now()
	err := measure.Parallel(ctx, b.n, workers, func(i int) error {
		pr := shape.DeepCopy()
		pr.Namespace, pr.Name = ns, fmt.Sprintf("direct-%d", i)
		// Tekton alone gets all the time it needs (0: no timeout). With the
		// operator's operationTimeout, 10,000 at once had runs failing after
		// 15 minutes still in Tekton's queue; the operator phase keeps it,
		// and its bound on operations in flight keeps runs from waiting that long.
		pr.Spec.Timeouts = &tektonv1.TimeoutFields{Pipeline: &metav1.Duration{}}
		pr.Labels = map[string]string{benchLabel: "true"}
		return b.c.Create(ctx, pr)
	})
	if err != nil {
		return p, err
	}
	p.created = time.Since(start)
	err = b.waitFor(ctx, b.limit, "Tekton finishing the direct PipelineRuns", func() (bool, error) {
		runs := &tektonv1.PipelineRunList{}
		if err := b.cache.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{benchLabel: "true"}, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		done, failed := 0, 0
		for i := range runs.Items {
			if c := runs.Items[i].Status.GetCondition(apis.ConditionSucceeded); c != nil && !c.IsUnknown() {
				done++
				if c.IsFalse() {
					failed++
				}
			}
		}
		if failed > 0 {
			return false, fmt.Errorf("%d direct PipelineRuns failed", failed)
		}
		b.progress("direct PipelineRuns finished", done, start)
		return done == b.n, nil
	})
	p.done = time.Since(start)
	return p, err
}

// applyExperiments creates N Experiments and waits until all are Ready.
func (b *bench) applyExperiments(ctx context.Context) (phase, error) {
	var p phase
	start := time.Now()
	err := measure.Parallel(ctx, b.n, workers, func(i int) error { return b.c.Create(ctx, experiment(b.ns, fmt.Sprintf("e-%d", i))) })
	if err != nil {
		return p, err
	}
	p.created = time.Since(start)
	err = b.waitFor(ctx, b.limit, "every Experiment Ready", func() (bool, error) {
		list := &pipelinesv1beta1.ExperimentList{}
		if err := b.cache.List(ctx, list, client.InNamespace(b.ns), client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if list.Items[i].Name != "shape" && meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, pipelinesv1beta1.ConditionReady) {
				ready++
			}
		}
		b.progress("Experiments Ready", ready, start)
		return ready == b.n, nil
	})
	p.done = time.Since(start)
	return p, err
}

func experiment(ns, name string) *pipelinesv1beta1.Experiment {
	return &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "scale benchmark"}}
}

// cleanUp releases the Experiments without backend calls and deletes the
// namespaces (kwok still running, so the fake pods go too): -fairness's
// second one first, whose Experiments use the Provider of the first.
func (b *bench) cleanUp() {
	if b.quietNS != "" {
		b.cleanUpNamespace(b.quietNS)
	}
	if b.againNS != "" {
		b.cleanUpNamespace(b.againNS)
	}
	b.cleanUpNamespace(b.ns)
}

func (b *bench) cleanUpNamespace(ns string) {
	ctx := context.Background()
	fmt.Printf("cleaning up namespace %s\n", ns)
	list := &pipelinesv1beta1.ExperimentList{}
	if err := b.c.List(ctx, list, client.InNamespace(ns)); err == nil {
		patch := client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"`+pipelinesv1beta1.AnnotationSkipBackendDeletion+`":"true"}}}`))
		_ = measure.Parallel(ctx, len(list.Items), workers, func(i int) error {
			return client.IgnoreNotFound(b.c.Patch(ctx, &list.Items[i], patch))
		})
	}
	_ = b.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	_ = b.waitFor(ctx, 30*time.Minute, "namespace "+ns+" gone", func() (bool, error) {
		err := b.c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func (b *bench) progress(what string, done int, start time.Time) {
	if time.Since(b.lastProgress) >= 15*time.Second {
		b.lastProgress = time.Now()
		fmt.Printf("  %v: %d/%d %s\n", time.Since(start).Round(time.Second), done, b.n, what)
	}
}

func (b *bench) waitFor(ctx context.Context, limit time.Duration, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: not after %v", what, limit)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
