// Command soak runs the chaos suite (e2e/chaos_test.go) again and again on
// the local cluster for a while, with more resources than make test's
// bounded round, and prints each iteration's figures and their spread over
// the whole soak: leader handover, API downtime, time to release every
// finalizer, completions delivered. It stops at the first failing iteration
// and names its log. Run after make demo, inside the cluster's namespace:
//
//	hack/cluster.sh exec go run ./bench/soak -duration 2h -per-kind 20
//
// (make soak). Each iteration's whole output is in bin/soak/.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

// figures are what one iteration's log says, matched on the lines the
// chaos suite prints (t.Logf).
var figures = map[string]*regexp.Regexp{
	"leader handover":        regexp.MustCompile(`leader killed; a new one led (\S+) later`),
	"API downtime":           regexp.MustCompile(`kube-apiserver killed; it answered again (\S+) later`),
	"all deleted after":      regexp.MustCompile(`resources deleted (\S+) after a new leader took over`),
	"resources Ready":        regexp.MustCompile(`(\d+) resources Ready after`),
	"completions once":       regexp.MustCompile(`(\d+) completions \(.*each delivered exactly once`),
	"deliveries refused":     regexp.MustCompile(`the sink refused (\d+) deliveries`),
	"operation PipelineRuns": regexp.MustCompile(`; (\d+) PipelineRuns, \d+ succeeded`),
}

func main() {
	duration := flag.Duration("duration", time.Hour, "start iterations until this much time has passed")
	rounds := flag.Int("rounds", 6, "faults per iteration (CHAOS_ROUNDS; each fault in turn)")
	perKind := flag.Int("per-kind", 12, "resources of each kind per iteration (CHAOS_PER_KIND)")
	runs := flag.Int("completing-runs", 4, "Tekton-provider Runs per iteration (CHAOS_COMPLETING_RUNS)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := soak(ctx, *duration, *rounds, *perKind, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func soak(ctx context.Context, duration time.Duration, rounds, perKind, runs int) error {
	root := testenv.RepoRoot()
	logs := filepath.Join(root, "bin", "soak")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	seen := map[string][]float64{}
	start := time.Now()
	for i := 1; time.Since(start) < duration; i++ {
		log := filepath.Join(logs, fmt.Sprintf("iteration-%d.log", i))
		began := time.Now()
		got, err := iteration(ctx, root, log, rounds, perKind, runs)
		for name, values := range got {
			seen[name] = append(seen[name], values...)
		}
		if err != nil {
			return fmt.Errorf("iteration %d failed after %v (%w); its log: %s", i, time.Since(began).Round(time.Second), err, log)
		}
		fmt.Printf("iteration %d passed in %v:%s\n", i, time.Since(began).Round(time.Second), summary(got))
	}
	fmt.Printf("soak passed: %v, over all iterations:%s\n", time.Since(start).Round(time.Second), summary(seen))
	return nil
}

// iteration runs the chaos suite once, its output to log, and returns the
// figures it printed.
func iteration(ctx context.Context, root, log string, rounds, perKind, runs int) (map[string][]float64, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", "e2e,chaos", "-count=1", "-timeout", "90m",
		"-run", "^TestChaosFaultsWhileSynchronising$", "-v", "./e2e/")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CHAOS_ROUNDS="+strconv.Itoa(rounds), "CHAOS_PER_KIND="+strconv.Itoa(perKind),
		"CHAOS_COMPLETING_RUNS="+strconv.Itoa(runs))
	// go test and the test binary it starts go together; the namespaces an
	// interrupted iteration leaves go with make cluster-down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	got := parse(io.TeeReader(out, f))
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return got, fmt.Errorf("the chaos suite exited with %d", exit.ExitCode())
		}
		return got, err
	}
	return got, nil
}

// parse reads the suite's output and collects its figures, durations in
// seconds.
func parse(r io.Reader) map[string][]float64 {
	got := map[string][]float64{}
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for lines.Scan() {
		for name, re := range figures {
			m := re.FindStringSubmatch(lines.Text())
			if m == nil {
				continue
			}
			if d, err := time.ParseDuration(m[1]); err == nil {
				got[name] = append(got[name], d.Seconds())
			} else if n, err := strconv.ParseFloat(m[1], 64); err == nil {
				got[name] = append(got[name], n)
			}
		}
	}
	return got
}

// summary is "name min/median/max (count)" for each figure, in name order.
func summary(got map[string][]float64) string {
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	var s string
	for _, name := range names {
		v := append([]float64(nil), got[name]...)
		sort.Float64s(v)
		s += fmt.Sprintf("\n  %-24s min %g, median %g, max %g (%d)", name, v[0], v[len(v)/2], v[len(v)-1], len(v))
	}
	return s
}
