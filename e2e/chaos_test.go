//go:build e2e && chaos

package e2e

// The chaos suite (issue #14, first part): while resources of every kind
// are being synchronised, some through a provider that fails until it is
// fixed midway, and Runs and RunConfigurations of the Tekton provider
// complete and publish their completions to a CloudEvent sink that refuses
// them until the faults are over, one fault per round, in turn: (a) SIGKILL the
// operator's leader, (b) SIGKILL kube-apiserver (the local cluster's
// supervisor restarts it), (c) stop Tekton's controller for 30 s. Run on the
// local cluster with the operator installed by its chart (two replicas,
// leader election):
//
//	hack/cluster.sh exec env CHAOS_ROUNDS=5 CHAOS_PER_KIND=20 \
//	  go test -tags e2e,chaos -run TestChaos -v ./e2e/
//
// It prints the figures (leader handover, API downtime) and checks the
// invariants at the end; it never asserts a duration.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestChaosFaultsWhileSynchronising(t *testing.T) {
	rounds, perKind := envInt("CHAOS_ROUNDS", 3), envInt("CHAOS_PER_KIND", 8)
	ns := namespace(t, "e2e-chaos")
	installProvider(t, ns, "kfp")
	// Every operation takes a while, so kills land in the middle of them.
	provider(t, ns, "slow", images["FIXTURE_PROVIDER_IMAGE"], `{"*": {"sleep": "2s"}}`)
	// (d) Fails every operation until it is fixed midway: its retries cross the other faults.
	provider(t, ns, "flaky", images["FIXTURE_PROVIDER_IMAGE"], `{"*": {"error": "chaos: backend unavailable", "exitCode": 1}}`)
	pipelineImage := images["FIXTURE_PIPELINE_IMAGE"]

	completions := startCompletionChaos(t, envInt("CHAOS_COMPLETING_RUNS", 3))
	var refs []ref
	for i := range perKind {
		p := []string{"kfp", "slow", "flaky"}[i%3]
		create(t, ns, fmt.Sprintf("kind: Experiment\nmetadata: {name: exp-%d}\nspec: {provider: %s, description: chaos}\n", i, p))
		create(t, ns, fmt.Sprintf("kind: Pipeline\nmetadata: {name: pipe-%d}\nspec: {provider: %s, image: %s, framework: {name: fixture}}\n", i, p, pipelineImage))
		create(t, ns, fmt.Sprintf(`kind: RunSchedule
metadata: {name: sched-%d}
spec:
  provider: %s
  pipeline: pipe-%d
  schedule: {cronExpression: "0 2 * * *"}
`, i, p, i))
		create(t, ns, fmt.Sprintf("kind: Run\nmetadata: {name: run-%d}\nspec: {provider: %s, pipeline: pipe-%d}\n", i, p, i))
		refs = append(refs, ref{ns, "Experiment", fmt.Sprintf("exp-%d", i)}, ref{ns, "Pipeline", fmt.Sprintf("pipe-%d", i)},
			ref{ns, "RunSchedule", fmt.Sprintf("sched-%d", i)}, ref{ns, "Run", fmt.Sprintf("run-%d", i)})
	}
	refs = append(refs, completions.refs...)

	var handovers, apiDowntimes []time.Duration
	for round := range rounds {
		time.Sleep(10 * time.Second)
		if round == rounds/2 { // fixed midway: later faults land in its retries
			patch(t, "Provider", ns, "flaky", `{"spec":{"parameters":{"fixture":{"*":null}}}}`) // JSON merge patch: null removes
		}
		switch round % 3 {
		case 0: // (a) SIGKILL the leader
			handover := killLeaderAndWait(t)
			handovers = append(handovers, handover)
			t.Logf("round %d: leader killed; a new one led %v later", round+1, handover.Round(100*time.Millisecond))
		case 1: // (b) SIGKILL kube-apiserver; the supervisor restarts it
			down := restartAPIServer(t)
			apiDowntimes = append(apiDowntimes, down)
			t.Logf("round %d: kube-apiserver killed; it answered again %v later", round+1, down.Round(100*time.Millisecond))
		case 2: // (c) stop Tekton's controller for a while
			restart := stopTekton(t)
			time.Sleep(30 * time.Second)
			restart()
			t.Logf("round %d: Tekton's controller stopped for 30 s", round+1)
		}
	}

	completions.sinkBack(t)
	waitFor(t, 15*time.Minute, "every resource Ready", func() (bool, string) {
		for _, r := range refs {
			if ok, why := readyIs(get(t, r.kind, r.ns, r.name), "True"); !ok {
				return false, r.kind + "/" + r.name + ": " + why
			}
		}
		return true, ""
	})

	// Invariants: at most one succeeded run per operation and version of a
	// resource (deterministic names make a second impossible; this checks
	// it held). Finalizers are checked by deleting everything below.
	succeeded, attempts := 0, 0
	for _, r := range refs {
		seen := map[string]int{}
		for _, pr := range runsOf(t, r.ns, r.kind, r.name) {
			attempts++
			if succeededCondition(&pr) == "True" {
				succeeded++
				key := pr.Labels["pipelines.kubeflow.org/operation"] + "@" + pr.Labels["pipelines.kubeflow.org/version"]
				seen[key]++
				assert.Equal(t, 1, seen[key], "%s/%s: a second succeeded %s", r.kind, r.name, key)
			}
		}
		if r.kind != "RunConfiguration" { // its operations are its RunSchedules'
			assert.NotZero(t, len(seen), "%s/%s has a succeeded run", r.kind, r.name)
		}
	}
	t.Logf("%d resources Ready after %d faults; %d PipelineRuns, %d succeeded; leader handover %s; API downtime %s",
		len(refs), rounds, attempts, succeeded, spread(handovers), spread(apiDowntimes))
	completions.check(t)

	// Every resource deleted at once, the leader killed while their backend
	// deletes run: each finalizer is released, and one still held says why.
	for _, r := range refs {
		remove(t, r.kind, r.ns, r.name)
	}
	time.Sleep(5 * time.Second)
	handover := killLeaderAndWait(t)
	deleted := time.Now()
	waitFor(t, 10*time.Minute, "every resource deleted", func() (bool, string) {
		for _, r := range refs {
			if obj := get(t, r.kind, r.ns, r.name); obj != nil {
				_, why := readyIs(obj, "False")
				return false, fmt.Sprintf("%s/%s still held by %v: %s", r.kind, r.name, obj.GetFinalizers(), why)
			}
		}
		return true, ""
	})
	t.Logf("%d resources deleted %v after a new leader took over (handover %v)", len(refs),
		time.Since(deleted).Round(time.Second), handover.Round(100*time.Millisecond))
}

// ref names one resource of the suite.
type ref struct{ ns, kind, name string }

// spread is "min/median/max" of ds, or "-".
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	return fmt.Sprintf("min %v, median %v, max %v (%d)", r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]), len(ds))
}

// killLeaderAndWait kills the leader and returns the time until another
// holder acquired the lease.
func killLeaderAndWait(t *testing.T) time.Duration {
	t.Helper()
	old := currentLease(t)
	killed := time.Now()
	uid := podUID(t, holder(old))
	killProcess(t, "operator", "cgroup", uid, strings.ReplaceAll(uid, "-", "_"))
	var next coordinationv1.Lease
	waitFor(t, 3*time.Minute, "a new leader", func() (bool, string) {
		next = currentLease(t)
		return holder(next) != "" && holder(next) != holder(old), "holder " + holder(next)
	})
	return next.Spec.AcquireTime.Time.Sub(killed)
}

// restartAPIServer asks the local cluster's supervisor to restart
// kube-apiserver, kills it, and returns the time until it answered again.
func restartAPIServer(t *testing.T) time.Duration {
	t.Helper()
	request := filepath.Join(root, "bin", "cluster", "restart", "kube-apiserver")
	require.NoError(t, os.MkdirAll(filepath.Dir(request), 0o755))
	require.NoError(t, os.WriteFile(request, nil, 0o644))
	killed := time.Now()
	killProcess(t, "kube-apiserver", "cmdline", filepath.Join(root, "bin", "cluster")) // not an envtest one
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if _, err := clientset.Discovery().ServerVersion(); err == nil {
			return time.Since(killed)
		}
	}
	t.Fatal("kube-apiserver did not answer again within 3 minutes")
	return 0
}

// stopTekton scales Tekton's controller to none and returns what scales it
// back to the replicas it had; the test's end does, if nothing did before
// (the cluster is shared: nothing runs a PipelineRun without it).
func stopTekton(t *testing.T) func() {
	t.Helper()
	var d appsv1.Deployment
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: "tekton-pipelines", Name: "tekton-pipelines-controller"}, &d))
	replicas := int32(1)
	if d.Spec.Replicas != nil && *d.Spec.Replicas > 0 {
		replicas = *d.Spec.Replicas
	}
	scale := func(n int32) {
		run(t, "kubectl", "scale", "-n", "tekton-pipelines", "deployment/tekton-pipelines-controller", "--replicas="+strconv.Itoa(int(n)))
	}
	var once sync.Once
	restart := func() { once.Do(func() { scale(replicas) }) }
	t.Cleanup(restart)
	scale(0)
	return restart
}
