// Command cluster measures the local real cluster (DESIGN §9) and prints
// figures: pod start-to-completion latency, TaskRun latency, the latency of
// an operation's PipelineRun and of a resource from create to Ready through
// the operator, and the memory of the whole cluster. Run it inside the
// cluster's namespace after `make demo` (or hack/install-operator.sh):
//
//	hack/cluster.sh exec go run ./bench/cluster -n 10
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

func main() {
	n := flag.Int("n", 10, "objects of each kind, created one after another")
	stagesOnly := flag.Bool("breakdown", false, "instead: apply -n Experiments one after another and print where each one's time from apply to Ready goes, stage by stage (median, p90)")
	flag.Parse()
	if err := run(*n, *stagesOnly); err != nil {
		fmt.Fprintln(os.Stderr, "bench/cluster:", err)
		os.Exit(1)
	}
}

func run(n int, stagesOnly bool) error {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join("bin", "kubeconfig"))
	if err != nil {
		return err
	}
	cl, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	images, err := testenv.Images()
	if err != nil {
		return err
	}
	ns := fmt.Sprintf("bench-%d", time.Now().Unix())
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{contract.LabelPodSecurityEnforce: "restricted"}}}); err != nil {
		return err
	}
	defer cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) //nolint:errcheck
	out, err := exec.Command(filepath.Join("bin", "helm"), "install", "kfp", "config/helm/kfp-tekton-provider", "-n", ns,
		"--set", "provider.image="+images["FIXTURE_PROVIDER_IMAGE"], "--wait").CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm: %w: %s", err, out)
	}
	if stagesOnly {
		return breakdown(ctx, cl, ns, n)
	}
	step := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: images["FIXTURE_COMPILER_IMAGE"], Command: []string{"/compiler"}, Args: []string{"/tmp/out"},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true),
				RunAsUser: ptr.To[int64](65532), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}
	}

	var pods, taskRuns, resources, pipelineRuns []time.Duration
	for i := 0; i < n; i++ {
		d, err := timePod(ctx, cl, ns, i, step("one"))
		if err != nil {
			return fmt.Errorf("pod: %w", err)
		}
		pods = append(pods, d)
		if d, err = timeTaskRun(ctx, cl, ns, i, step("one")); err != nil {
			return fmt.Errorf("taskrun: %w", err)
		}
		taskRuns = append(taskRuns, d)
		if d, err = timeExperiment(ctx, cl, ns, i); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		resources = append(resources, d)
	}
	prs := &tektonv1.PipelineRunList{}
	if err := cl.List(ctx, prs, client.InNamespace(ns), client.MatchingLabels{contract.LabelOwnerKind: string(contract.KindExperiment)}); err != nil {
		return err
	}
	for _, pr := range prs.Items {
		if pr.Status.CompletionTime != nil {
			pipelineRuns = append(pipelineRuns, pr.Status.CompletionTime.Sub(pr.CreationTimestamp.Time))
		}
	}
	fmt.Printf("local cluster, %d of each, created one after another (image cached after the first):\n", n)
	report("pod create → Succeeded", pods)
	report("TaskRun (1 step) create → done", taskRuns)
	report("operation PipelineRun create → done (s resolution)", pipelineRuns)
	report("Experiment create → Ready (operator + Tekton)", resources)
	return memory()
}

// timePod times the i-th pod of one container c, created until Succeeded.
func timePod(ctx context.Context, cl client.Client, ns string, i int, c corev1.Container) (time.Duration, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}}}
	return timed(func() error { return cl.Create(ctx, pod) }, func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return pod.Status.Phase == corev1.PodSucceeded, err
	})
}

// timeTaskRun times the i-th TaskRun of one step like c, created until done.
func timeTaskRun(ctx context.Context, cl client.Client, ns string, i int, c corev1.Container) (time.Duration, error) {
	tr := &tektonv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("taskrun-%d", i), Namespace: ns},
		Spec: tektonv1.TaskRunSpec{TaskSpec: &tektonv1.TaskSpec{Steps: []tektonv1.Step{{
			Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args, SecurityContext: c.SecurityContext}}}}}
	return timed(func() error { return cl.Create(ctx, tr) }, func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(tr), tr)
		return tr.IsDone(), err
	})
}

// timeExperiment times the i-th Experiment, created until Ready.
func timeExperiment(ctx context.Context, cl client.Client, ns string, i int) (time.Duration, error) {
	exp := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("exp-%d", i), Namespace: ns},
		Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "bench"}}
	return timed(func() error { return cl.Create(ctx, exp) }, func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(exp), exp)
		for _, c := range exp.Status.Conditions {
			if c.Type == pipelinesv1beta1.ConditionReady && c.Status == metav1.ConditionTrue {
				return true, err
			}
		}
		return false, err
	})
}

func timed(create func() error, done func() (bool, error)) (time.Duration, error) {
	start := time.Now()
	if err := create(); err != nil {
		return 0, err
	}
	for time.Since(start) < 3*time.Minute {
		if ok, err := done(); err == nil && ok {
			return time.Since(start), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("not done after 3m")
}

func report(what string, ds []time.Duration) {
	if len(ds) == 0 {
		fmt.Printf("  %-52s no samples\n", what)
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	fmt.Printf("  %-52s median %5.2fs  p90 %5.2fs  min %5.2fs  max %5.2fs\n", what,
		ds[len(ds)/2].Seconds(), ds[len(ds)*9/10].Seconds(), ds[0].Seconds(), ds[len(ds)-1].Seconds())
}

// memory sums the resident memory of the cluster's processes (those in this
// network namespace: control plane, kubelet, containerd and its shims) and
// of its pods (the cgroup the kubelet puts them in).
func memory() error {
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return err
	}
	byName := map[string]int64{}
	var total int64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		if link, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); link != self {
			continue
		}
		name, rss := status(filepath.Join("/proc", e.Name(), "status"))
		byName[name] += rss
		total += rss
	}
	fmt.Printf("memory: cluster processes %d MiB resident:", total>>20)
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return byName[names[i]] > byName[names[j]] })
	for _, n := range names {
		if byName[n] >= 8<<20 {
			fmt.Printf(" %s %d,", n, byName[n]>>20)
		}
	}
	fmt.Println()
	if data, err := os.ReadFile("/sys/fs/cgroup/memory/kfp-tekton-local/memory.usage_in_bytes"); err == nil {
		v, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		fmt.Printf("memory: pods (cgroup %s, page cache included) %d MiB\n", "/kfp-tekton-local", v>>20)
	}
	return nil
}

func status(path string) (name string, rss int64) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if v, ok := strings.CutPrefix(line, "Name:"); ok {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return name, rss
}
