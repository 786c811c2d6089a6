package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/bench/internal/measure"
)

// phases are the throughput bench's phases to run.
type phases struct {
	direct   bool // Tekton alone, in the bench's namespace
	operator bool // through the operator
	again    bool // Tekton alone again, after the operator phase, in againNS
}

// phasesFromFlags are the phases -skip-direct, -direct-once and
// -skip-operator leave; an error if they leave nothing to compare.
func phasesFromFlags(skipDirect, directOnce, skipOperator bool) (phases, error) {
	p := phases{direct: !skipDirect, operator: !skipOperator, again: !skipDirect && !directOnce}
	if !p.operator && !p.again {
		return p, fmt.Errorf("-skip-operator needs both direct phases (neither -skip-direct nor -direct-once)")
	}
	return p, nil
}

// operatorFigures are the leader's figures over the operator phase.
type operatorFigures struct {
	phase
	cpu                      float64 // seconds
	peakRSSMiB, rssMiB       int
	requestsBefore, requests map[string]float64
}

// throughput runs the direct phase, the operator phase and the direct
// phase again (each if asked), and prints their figures. The direct phase's
// cost grows run after run on one cluster, and the operator's phase always
// ran second: direct, operator, direct brackets the operator phase with
// Tekton alone before and after it in one invocation.
func (b *bench) throughput(ctx context.Context, shape *tektonv1.PipelineRun, want phases, tuning tektonTuning) error {
	var direct, again phase
	var operator operatorFigures
	var err error
	if want.direct {
		fmt.Printf("direct: creating %d PipelineRuns\n", b.n)
		if direct, err = b.measureDirect(ctx, shape, b.ns); err != nil {
			return err
		}
		if err := b.clearDirect(ctx); err != nil {
			return err
		}
	}
	if want.operator {
		if operator, err = b.measureOperator(ctx); err != nil {
			return err
		}
	}
	if want.again {
		if want.operator {
			if err := b.clearOperatorPods(ctx); err != nil {
				return err
			}
		}
		fmt.Printf("direct, again: creating %d PipelineRuns in %s\n", b.n, b.againNS)
		if again, err = b.measureDirect(ctx, shape, b.againNS); err != nil {
			return err
		}
	}

	n := b.n
	fmt.Printf("\nresources:        %d (fake node: kwok; Tekton v1.15.1 and the operator on the real node; %s; Tekton: %s)\n", n, b.boundSettings(ctx), tuning)
	if want.direct {
		direct.print("direct", "PipelineRuns created until Tekton finished them all", n)
	}
	if want.operator {
		operator.print("operator", "Experiments applied until all Ready", n)
	}
	if want.again {
		again.print("direct, again", "the same, after the phases above, in a namespace of its own", n)
	}
	if want.direct && want.again {
		fmt.Printf("drift:            %.2f (the second direct phase / the first: Tekton alone, later on the same cluster)\n", again.done.Seconds()/direct.done.Seconds())
	}
	if !want.operator {
		return nil
	}
	switch {
	case want.direct && want.again:
		mean := (direct.done + again.done) / 2
		fmt.Printf("overhead:         %.2f (operator / the two direct phases' mean; 1.00 = the operator adds nothing to Tekton's own time; %.2f against the first, %.2f against the second)\n",
			operator.done.Seconds()/mean.Seconds(), operator.done.Seconds()/direct.done.Seconds(), operator.done.Seconds()/again.done.Seconds())
	case want.direct:
		fmt.Printf("overhead:         %.2f (operator / direct; 1.00 = the operator adds nothing to Tekton's own time)\n",
			operator.done.Seconds()/direct.done.Seconds())
	}
	fmt.Printf("operator leader:  peak RSS %d MiB, RSS at the operator phase's end %d MiB, CPU %.1f s (%.2f ms per Experiment)\n",
		operator.peakRSSMiB, operator.rssMiB, operator.cpu, 1000*operator.cpu/float64(n))
	printRequests(operator.requestsBefore, operator.requests, n)
	return nil
}

// measureOperator runs the operator phase, with the leader's figures.
func (b *bench) measureOperator(ctx context.Context) (operatorFigures, error) {
	var f operatorFigures
	leader, err := b.leader(ctx)
	if err != nil {
		return f, err
	}
	metrics, err := b.metricsReader(ctx, leader)
	if err != nil {
		return f, err
	}
	defer metrics.cleanUp()
	if f.requestsBefore, err = metrics.requests(); err != nil {
		return f, err
	}
	cpuBefore, machineBefore, serverBefore := leader.cpuSeconds(), measure.TakeMachine(), b.serverCounts(ctx)
	fmt.Printf("operator: applying %d Experiments\n", b.n)
	if f.phase, err = b.applyExperiments(ctx); err != nil {
		return f, err
	}
	f.machine = measure.TakeMachine().Since(machineBefore)
	f.server = measure.Grown(serverBefore, b.serverCounts(ctx))
	time.Sleep(2 * time.Second) // the last status writes' requests land in the counters
	if f.requests, err = metrics.requests(); err != nil {
		return f, err
	}
	f.cpu = leader.cpuSeconds() - cpuBefore
	f.peakRSSMiB, f.rssMiB = measure.StatusKiB(leader.pid, "VmHWM")/1024, measure.StatusKiB(leader.pid, "VmRSS")/1024
	return f, nil
}

// measureDirect runs the direct phase in namespace ns, with the machine's
// and kube-apiserver's figures.
func (b *bench) measureDirect(ctx context.Context, shape *tektonv1.PipelineRun, ns string) (phase, error) {
	machineBefore, serverBefore := measure.TakeMachine(), b.serverCounts(ctx)
	p, err := b.createDirectly(ctx, shape, ns)
	if err != nil {
		return p, err
	}
	p.machine = measure.TakeMachine().Since(machineBefore)
	p.server = measure.Grown(serverBefore, b.serverCounts(ctx))
	return p, nil
}

// printRequests prints the API requests per Experiment by method, from the
// leader's counters before and after n Experiments.
func printRequests(before, after map[string]float64, n int) {
	var methods []string
	for m := range after {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	total, writes := 0.0, 0.0
	fmt.Printf("API requests per Experiment:")
	for _, m := range methods {
		d := after[m] - before[m]
		total += d
		if m != http.MethodGet {
			writes += d
		}
		fmt.Printf(" %s %.2f", m, d/float64(n))
	}
	fmt.Printf("; writes %.2f, all %.2f\n", writes/float64(n), total/float64(n))
}

// phase is one measured phase of the run.
type phase struct {
	created, done time.Duration        // from the first create
	machine       measure.MachineSpan  // the whole machine's CPU, by process
	server        []measure.CountDelta // kube-apiserver's counters' growth
}

func (p phase) print(name, what string, n int) {
	fmt.Printf("%-17s %v (%s; creates took %v; %.0f per minute; Tekton controller CPU %.1f s)\n",
		name+":", p.done.Round(100*time.Millisecond), what, p.created.Round(100*time.Millisecond),
		float64(n)/p.done.Minutes(), p.machine.Of(tektonController))
	fmt.Printf("%-17s %s\n", "  machine CPU:", p.machine)
	var top []string
	for _, c := range p.server {
		if len(top) == 16 || c.Delta < float64(n)/20 {
			break
		}
		top = append(top, fmt.Sprintf("%s %.2f", c.Key, c.Delta/float64(n)))
	}
	if len(top) > 0 {
		fmt.Printf("  kube-apiserver per resource: %s\n", strings.Join(top, "; "))
	}
}

// serverCounts reads kube-apiserver's request, watch-event and webhook
// counters (nil if it cannot: the phase prints without them).
func (b *bench) serverCounts(ctx context.Context) map[string]float64 {
	body, err := b.clientset.Discovery().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		fmt.Printf("kube-apiserver's metrics unread: %v\n", err)
		return nil
	}
	defer body.Close()
	counts, err := measure.APIServerCounts(body)
	if err != nil {
		fmt.Printf("kube-apiserver's metrics unread: %v\n", err)
	}
	return counts
}
