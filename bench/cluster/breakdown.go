package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// The stages of one Experiment's create, in order. Each is the moment this
// program's watch first saw the object in that state: one clock (this
// process's), millisecond resolution, unlike the API's second-resolution
// timestamps. A watch event arrives a few milliseconds after the write, the
// same for every stage, so differences between stages are fair.
var stages = []string{
	"applied",               // just before the Experiment's create call
	"reconciled",            // the operator's first write to it (finalizer or status)
	"PipelineRun created",   // its operation's PipelineRun
	"TaskRun created",       // Tekton's first TaskRun of that run
	"pod created",           // the first pod of that run
	"pod scheduled",         // that pod bound to the node
	"container running",     // its first container (a step) started
	"steps ended",           // every container of its last pod terminated
	"PipelineRun succeeded", // Tekton read the results and ended the run
	"status written",        // the Experiment Ready=True
}

// timeline records, per Experiment, when each stage was first seen.
type timeline struct {
	mu sync.Mutex
	// at[experiment][stage]
	at map[string]map[string]time.Time
	// owner maps a PipelineRun name to its Experiment.
	owner map[string]string
	// finished holds the pods whose containers were all seen terminated: a
	// pod's later updates do not move its end.
	finished map[string]bool
}

func (t *timeline) mark(exp, stage string, when time.Time) {
	if exp == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.at[exp]
	if m == nil {
		m = map[string]time.Time{}
		t.at[exp] = m
	}
	if _, seen := m[stage]; !seen || stage == "steps ended" { // the last pod's end
		m[stage] = when
	}
}

func (t *timeline) experimentOf(pipelineRun string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.owner[pipelineRun]
}

// breakdown applies n Experiments one after another and prints, per stage,
// the median and p90 of the time from the previous stage, and which side
// (operator, Tekton, kubelet) each interval belongs to.
func breakdown(ctx context.Context, cl client.WithWatch, ns string, n int) error {
	t := &timeline{at: map[string]map[string]time.Time{}, owner: map[string]string{}, finished: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := t.watch(ctx, cl, ns); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("breakdown-%d", i)
		exp := &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: "kfp", Description: "bench"}}
		t.mark(name, "applied", time.Now())
		if err := cl.Create(ctx, exp); err != nil {
			return err
		}
		deadline := time.Now().Add(3 * time.Minute)
		for !t.complete(name) {
			if time.Now().After(deadline) {
				return fmt.Errorf("experiment %s: stages seen %v after 3m", name, t.seen(name))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.report(n)
	return nil
}

func (t *timeline) complete(exp string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.at[exp]) == len(stages)
}

func (t *timeline) seen(exp string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, s := range stages {
		if _, ok := t.at[exp][s]; ok {
			out = append(out, s)
		}
	}
	return out
}

// watch starts one watch per kind; each event marks the stages it shows.
func (t *timeline) watch(ctx context.Context, cl client.WithWatch, ns string) error {
	lists := []client.ObjectList{&pipelinesv1beta1.ExperimentList{}, &tektonv1.PipelineRunList{},
		&tektonv1.TaskRunList{}, &corev1.PodList{}}
	for _, l := range lists {
		w, err := cl.Watch(ctx, l, client.InNamespace(ns))
		if err != nil {
			return err
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					t.observe(ev.Object, time.Now())
				}
			}
		}()
	}
	return nil
}

func (t *timeline) observe(obj any, now time.Time) {
	switch o := obj.(type) {
	case *pipelinesv1beta1.Experiment:
		if len(o.Finalizers) > 0 || len(o.Status.Conditions) > 0 {
			t.mark(o.Name, "reconciled", now)
		}
		for _, c := range o.Status.Conditions {
			if c.Type == pipelinesv1beta1.ConditionReady && c.Status == metav1.ConditionTrue {
				t.mark(o.Name, "status written", now)
			}
		}
	case *tektonv1.PipelineRun:
		// The operator's owner label (the operator's vocabulary, read as a
		// user of its runs would).
		exp := o.Labels[contract.LabelOwnerName]
		if o.Labels[contract.LabelOwnerKind] != string(contract.KindExperiment) {
			return
		}
		t.mu.Lock()
		t.owner[o.Name] = exp
		t.mu.Unlock()
		t.mark(exp, "PipelineRun created", now)
		if c := o.Status.GetCondition("Succeeded"); c != nil && c.IsTrue() {
			t.mark(exp, "PipelineRun succeeded", now)
		}
	case *tektonv1.TaskRun:
		t.mark(t.experimentOf(o.Labels["tekton.dev/pipelineRun"]), "TaskRun created", now)
	case *corev1.Pod:
		exp := t.experimentOf(o.Labels["tekton.dev/pipelineRun"])
		t.mark(exp, "pod created", now)
		if o.Spec.NodeName != "" {
			t.mark(exp, "pod scheduled", now)
		}
		for _, s := range o.Status.ContainerStatuses {
			if s.State.Running != nil || s.State.Terminated != nil {
				t.mark(exp, "container running", now)
			}
		}
		t.mu.Lock()
		first := allTerminated(o) && !t.finished[o.Name]
		if first {
			t.finished[o.Name] = true
		}
		t.mu.Unlock()
		if first {
			t.mark(exp, "steps ended", now)
		}
	}
}

// allTerminated: every container of pod (its steps) has ended. Tekton reads
// a TaskRun's results from the steps' termination messages as they end,
// before the pod's phase follows.
func allTerminated(pod *corev1.Pod) bool {
	if len(pod.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated == nil {
			return false
		}
	}
	return true
}

// owners says whose time each interval (ending at the stage) is.
var owners = map[string]string{
	"reconciled":            "operator (work queue, finalizer write)",
	"PipelineRun created":   "operator (observe, decide, create)",
	"TaskRun created":       "Tekton controller",
	"pod created":           "Tekton controller",
	"pod scheduled":         "kube-scheduler",
	"container running":     "kubelet (sandbox, init containers, image cached)",
	"steps ended":           "the Task's steps (kubelet)",
	"PipelineRun succeeded": "Tekton controller (results, TaskRun, then run)",
	"status written":        "operator (results into status)",
}

func (t *timeline) report(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Printf("one Experiment create, %d applied one after another: time from the previous stage\n", n)
	var operator, total []time.Duration
	for i, s := range stages[1:] {
		prev := stages[i]
		var ds []time.Duration
		for _, m := range t.at {
			ds = append(ds, m[s].Sub(m[prev]))
		}
		med, p90 := quantiles(ds)
		fmt.Printf("  %-22s median %6.0f ms  p90 %6.0f ms   %s\n", s, ms(med), ms(p90), owners[s])
	}
	for _, m := range t.at {
		op := m["PipelineRun created"].Sub(m["applied"]) + m["status written"].Sub(m["PipelineRun succeeded"])
		operator = append(operator, op)
		total = append(total, m["status written"].Sub(m["applied"]))
	}
	med, p90 := quantiles(total)
	opMed, opP90 := quantiles(operator)
	fmt.Printf("  %-22s median %6.0f ms  p90 %6.0f ms\n", "applied → Ready", ms(med), ms(p90))
	fmt.Printf("  %-22s median %6.0f ms  p90 %6.0f ms   (%.0f %% of the median)\n", "the operator's share", ms(opMed), ms(opP90), 100*ms(opMed)/ms(med))
}

func quantiles(ds []time.Duration) (median, p90 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*9/10]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
