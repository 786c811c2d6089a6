package main

// The fairness phases (-fairness): how long one team's single resource
// waits while another team's burst is queued for the same Provider.
//
// The Provider, in the bench's namespace (team A), also admits a second,
// quiet namespace (team B). Measured, with one Experiment of B each time
// (apply → its operation PipelineRun created, as the bench's cache shows it,
// and apply → Ready):
//
//  1. idle: B's Experiment alone, the baseline;
//  2. at the burst's apply: A creates N Experiments, then B applies one at
//     once: this includes the leader's work queue, where B's first
//     reconcile waits behind the burst's own first ones (a finalizer and a
//     status each) as well as the limiter's share;
//  3. in the queue: once the leader has been over every one of the burst
//     (each has a Ready condition, most of them Queued), B applies
//     another: the limiter's share alone. With the fair queue it starts
//     after at most one admission of A; first in first out, it would wait
//     for the whole queued burst.
//
// A queue forms only if N is above the operator's maxOperationsInFlight
// (200 by default); the bench prints how many of A were Queued when each of
// B's was applied.

import (
	"context"
	"fmt"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/bench/internal/measure"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// latency is how long one of B's Experiments took from its apply.
type latency struct {
	created, ready time.Duration
	// queuedA counts A's Experiments Queued when it was applied.
	queuedA int
}

func (l latency) print(name, what string) {
	fmt.Printf("%-22s PipelineRun created after %v, Ready after %v (%s; %d of A's Queued at its apply)\n",
		name+":", l.created.Round(10*time.Millisecond), l.ready.Round(10*time.Millisecond), what, l.queuedA)
}

// quietNamespace is team B's namespace: the bench's own, suffixed.
func (b *bench) quietNamespace() string { return b.ns + "-b" }

// createQuietNamespace makes team B's namespace (before the Provider is
// installed, which admits it).
func (b *bench) createQuietNamespace(ctx context.Context) error {
	b.quietNS = b.quietNamespace()
	return b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.quietNS, Labels: map[string]string{"scale-bench": "true"}}})
}

// fairness runs the phases above and prints their figures.
func (b *bench) fairness(ctx context.Context) error {
	fmt.Printf("fairness: one Experiment of %s alone (the idle baseline)\n", b.quietNS)
	idle, err := b.quietLatency(ctx, "idle")
	if err != nil {
		return err
	}

	fmt.Printf("fairness: %d Experiments of %s, then one of %s\n", b.n, b.ns, b.quietNS)
	start := time.Now()
	if err := measure.Parallel(ctx, b.n, workers, func(i int) error { return b.c.Create(ctx, experiment(b.ns, fmt.Sprintf("burst-%d", i))) }); err != nil {
		return err
	}
	created := time.Since(start)
	atApply, err := b.quietLatency(ctx, "at-apply")
	if err != nil {
		return err
	}

	fmt.Printf("fairness: waiting for the leader's first pass over the burst\n")
	if err := b.waitFor(ctx, b.limit, "a Ready condition on every one of the burst", func() (bool, error) {
		seen, _, err := b.burstState(ctx)
		b.progress("of the burst with a Ready condition", seen, start)
		return seen == b.n, err
	}); err != nil {
		return err
	}
	firstPass := time.Since(start)
	inQueue, err := b.quietLatency(ctx, "in-queue")
	if err != nil {
		return err
	}
	_, queued, err := b.burstState(ctx)
	if err != nil {
		return err
	}

	fmt.Printf("\nfairness: a Provider of %s admitting %s; burst of %d Experiments in %s (creates took %v; the leader's first pass over them %v); %s\n",
		b.ns, b.quietNS, b.n, b.ns, created.Round(100*time.Millisecond), firstPass.Round(100*time.Millisecond), b.boundSettings(ctx))
	idle.print("idle (baseline)", "B's Experiment alone")
	atApply.print("during A's burst", "applied as A's creates ended: work queue and limiter")
	inQueue.print("behind A's queue", "applied once the leader had been over A's burst: the limiter's share")
	ratio := func(l latency) string {
		return fmt.Sprintf("%.2f created, %.2f Ready", l.created.Seconds()/idle.created.Seconds(), l.ready.Seconds()/idle.ready.Seconds())
	}
	fmt.Printf("ratio to idle:         during A's burst %s; behind A's queue %s (1.00: the burst costs B nothing)\n", ratio(atApply), ratio(inQueue))
	if queued == 0 || inQueue.queuedA == 0 {
		fmt.Printf("note: A's burst was not queued when B's last Experiment was applied (%d Queued): raise -n above the operator's maxOperationsInFlight\n", inQueue.queuedA)
	}
	return nil
}

// burstState counts the burst's Experiments with a Ready condition, and
// those Queued.
func (b *bench) burstState(ctx context.Context) (seen, queued int, err error) {
	list := &pipelinesv1beta1.ExperimentList{}
	if err := b.cache.List(ctx, list, client.InNamespace(b.ns), client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	for i := range list.Items {
		if list.Items[i].Name == "shape" {
			continue
		}
		if ready := meta.FindStatusCondition(list.Items[i].Status.Conditions, pipelinesv1beta1.ConditionReady); ready != nil {
			seen++
			if ready.Reason == pipelinesv1beta1.ReasonQueued {
				queued++
			}
		}
	}
	return seen, queued, nil
}

// quietLatency applies an Experiment of B named name, with A's Provider,
// and times its operation PipelineRun's creation (in A's namespace, where
// the Provider's runs live) and its Ready.
func (b *bench) quietLatency(ctx context.Context, name string) (latency, error) {
	var l latency
	var err error
	if _, l.queuedA, err = b.burstState(ctx); err != nil {
		return l, err
	}
	e := experiment(b.quietNS, name)
	e.Spec.Provider = pipelinesv1beta1.ProviderReference(b.ns + "/kfp")
	start := time.Now()
	if err := b.c.Create(ctx, e); err != nil {
		return l, err
	}
	deadline := start.Add(b.limit)
	for l.ready == 0 {
		if time.Now().After(deadline) {
			return l, fmt.Errorf("%s/%s not Ready after %v", b.quietNS, name, b.limit)
		}
		if l.created == 0 {
			runs := &tektonv1.PipelineRunList{}
			if err := b.cache.List(ctx, runs, client.InNamespace(b.ns), client.UnsafeDisableDeepCopy,
				client.MatchingLabels{contract.LabelOwnerNamespace: b.quietNS, contract.LabelOwnerName: name}); err != nil {
				return l, err
			}
			if len(runs.Items) > 0 {
				l.created = time.Since(start)
			}
		}
		// One object, read from the API server (B's namespace is not in the
		// bench's cache).
		if err := b.c.Get(ctx, client.ObjectKeyFromObject(e), e); err != nil {
			return l, err
		}
		if meta.IsStatusConditionTrue(e.Status.Conditions, pipelinesv1beta1.ConditionReady) {
			l.ready = time.Since(start)
			if l.created == 0 {
				l.created = l.ready // its run came and went between two looks
			}
			break
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return l, nil
}
