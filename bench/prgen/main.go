// Command prgen-bench measures prgen beside `kubectl kustomize` in one run:
// at -compare-apps × -versions runs (1,000) it writes the equivalent
// kustomize layout (one overlay per application/version pair, a root that
// includes them all), times `kubectl kustomize` on it and the prgen command
// on the matrix, and checks that both print the same PipelineRuns; at
// -apps × -versions runs (10,000) it times prgen alone. Times are the best
// of -reps; a command's from its start to its exit, its stdout to a file
// (prgen's "in process" time: parse, build, validate and serialise, without
// starting a process). It prints a table with the targets of issue 28 (≥ 200× at 1,000 runs, 10,000
// runs in ≤ 0.25 s); it fails only when the outputs differ or a command does.
//
//	go run ./bench/prgen
//	go run ./bench/prgen -reps 1 -kubectl /usr/local/bin/kubectl
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen/release"
)

type options struct {
	apps, compareApps, versions, reps int
	kubectl, prgen                    string
}

func main() {
	var o options
	flag.IntVar(&o.apps, "apps", 1000, "applications in the matrix prgen prints alone")
	flag.IntVar(&o.compareApps, "compare-apps", 100, "applications in the matrix prgen and kustomize both print")
	flag.IntVar(&o.versions, "versions", 10, "versions in both matrices")
	flag.IntVar(&o.reps, "reps", 3, "runs of each measurement; the best counts")
	flag.StringVar(&o.kubectl, "kubectl", "kubectl", "the kubectl binary (name on PATH or path)")
	flag.StringVar(&o.prgen, "prgen", "", "a prgen binary; built from ./cmd/prgen when empty")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// row is one line of the table; a zero duration was not measured.
type row struct {
	runs                        int
	prgen, inProcess, kustomize time.Duration
}

func run(o options, out io.Writer) error {
	dir, err := os.MkdirTemp("", "prgen-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.prgen == "" {
		o.prgen = filepath.Join(dir, "prgen")
		if _, _, err := command("go", "build", "-o", o.prgen, "github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen"); err != nil {
			return err
		}
	}
	kubectl, missing := exec.LookPath(o.kubectl)
	var rows []row
	for _, apps := range []int{o.compareApps, o.apps} {
		file := filepath.Join(dir, fmt.Sprintf("matrix-%d.yaml", apps))
		if err := os.WriteFile(file, matrix(apps, o.versions), 0o600); err != nil {
			return err
		}
		r := row{runs: apps * o.versions}
		var printed []byte
		if r.prgen, printed, err = best(o.reps, func() ([]byte, time.Duration, error) { return command(o.prgen, "-f", file) }); err != nil {
			return err
		}
		var runs []*release.Run
		if r.inProcess, runs, err = best(o.reps, func() ([]*release.Run, time.Duration, error) { return generate(file) }); err != nil {
			return err
		}
		if apps == o.compareApps && missing == nil {
			if r.kustomize, err = kustomize(kubectl, filepath.Join(dir, "kustomize"), runs, printed, o.reps, out); err != nil {
				return err
			}
		}
		rows = append(rows, r)
	}
	if missing != nil {
		fmt.Fprintf(out, "kubectl kustomize NOT MEASURED: %v (-kubectl names the binary)\n", missing)
	}
	fmt.Fprintf(out, "%d cores, %s, best of %d\n", runtime.NumCPU(), runtime.Version(), o.reps)
	return table(out, rows)
}

// kustomize writes runs' kustomize layout under dir, times `kubectl
// kustomize` on it and checks that it prints what prgen printed.
func kustomize(kubectl, dir string, runs []*release.Run, printed []byte, reps int, out io.Writer) (time.Duration, error) {
	files, err := kustomizeLayout(runs)
	if err != nil {
		return 0, err
	}
	if err := writeFiles(dir, files); err != nil {
		return 0, err
	}
	took, built, err := best(reps, func() ([]byte, time.Duration, error) { return command(kubectl, "kustomize", dir) })
	if err != nil {
		return 0, err
	}
	n, err := equivalent(printed, built)
	if err != nil {
		return 0, fmt.Errorf("kustomize and prgen printed different runs: %w", err)
	}
	version, _, _ := command(kubectl, "version", "--client")
	fmt.Fprintf(out, "%s\nequivalent: prgen and kustomize printed the same %d PipelineRuns from %d files (%d overlays) and 1 file, names aside (kustomize cannot use generateName)\n",
		strings.ReplaceAll(strings.TrimSpace(string(version)), "\n", ", "), n, len(files), len(runs))
	return took, nil
}

// writeFiles writes files by their paths relative to dir.
func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// generate is prgen's path in this process: parse the matrix, build and
// validate every run, serialise them (to a counter, as prgen to stdout).
func generate(file string) ([]*release.Run, time.Duration, error) {
	start := time.Now()
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, 0, err
	}
	m, err := release.Parse(file, data)
	if err != nil {
		return nil, 0, err
	}
	runs, err := m.Runs(context.Background(), release.Options{})
	if err != nil {
		return nil, 0, err
	}
	err = release.Write(io.Discard, runs, "yaml")
	return runs, time.Since(start), err
}

// best runs f reps times and returns the shortest time it reports and its
// last result.
func best[T any](reps int, f func() (T, time.Duration, error)) (time.Duration, T, error) {
	var (
		shortest time.Duration
		result   T
		err      error
	)
	for i := 0; i < max(reps, 1); i++ {
		var took time.Duration
		if result, took, err = f(); err != nil {
			return 0, result, err
		}
		if i == 0 || took < shortest {
			shortest = took
		}
	}
	return shortest, result, nil
}

// command runs name with args, its stdout to a file (as `> file` would:
// no copying through this process), and returns what it printed and how long it ran.
func command(name string, args ...string) ([]byte, time.Duration, error) {
	out, err := os.CreateTemp("", "prgen-bench-out-")
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	took := time.Since(start)
	printed, err := os.ReadFile(out.Name())
	return printed, took, err
}
