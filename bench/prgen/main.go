// Command prgen-bench measures prgen's path (parse a matrix, build and
// validate every run, serialise them) on a generated matrix and prints the
// figures. It asserts nothing: machines differ; compare ratios.
//
//	go run ./bench/prgen -apps 1000 -versions 10
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen/release"
)

func main() {
	apps := flag.Int("apps", 1000, "applications in the matrix")
	versions := flag.Int("versions", 10, "versions in the matrix")
	format := flag.String("o", "yaml", "output format")
	flag.Parse()
	if err := run(*apps, *versions, *format, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func matrix(apps, versions int) []byte {
	var b bytes.Buffer
	b.WriteString("namespace: ci\nmanifestsRepo: https://example.com/org/manifests.git\napplications:\n")
	for i := 0; i < apps; i++ {
		fmt.Fprintf(&b, "  - name: app-%d\n    repo: https://example.com/org/app-%d.git\n    context: components/app-%d\n    image: registry.example.com/org/app-%d\n    manifests: apps/app-%d\n", i, i, i, i, i)
	}
	b.WriteString("versions:\n")
	for i := 0; i < versions; i++ {
		fmt.Fprintf(&b, "  - name: v0.%d\n    revision: release-0.%d\n    manifestsBranch: release-0.%d\n", i, i, i)
	}
	return b.Bytes()
}

func run(apps, versions int, format string, out io.Writer) error {
	data := matrix(apps, versions)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	start := time.Now()
	m, err := release.Parse("bench.yaml", data)
	if err != nil {
		return err
	}
	parsed := time.Now()
	runs, err := m.Runs(context.Background(), release.Options{})
	if err != nil {
		return err
	}
	built := time.Now()
	// As prgen does with stdout; the sink counts what would be printed.
	var sink countingWriter
	if err := release.Write(&sink, runs, format); err != nil {
		return err
	}
	written := time.Now()

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)

	n := len(runs)
	total := written.Sub(start)
	fmt.Fprintf(out, "runs:            %d (%d applications × %d versions), output %s, %.1f MiB\n", n, apps, versions, format, float64(sink)/(1<<20))
	fmt.Fprintf(out, "total:           %v (%.0f ns/run)\n", total.Round(time.Millisecond), float64(total.Nanoseconds())/float64(n))
	fmt.Fprintf(out, "  parse matrix:  %v\n", parsed.Sub(start).Round(time.Millisecond))
	fmt.Fprintf(out, "  build+validate:%v (%.0f ns/run)\n", built.Sub(parsed).Round(time.Millisecond), float64(built.Sub(parsed).Nanoseconds())/float64(n))
	fmt.Fprintf(out, "  serialise:     %v (%.0f ns/run)\n", written.Sub(built).Round(time.Millisecond), float64(written.Sub(built).Nanoseconds())/float64(n))
	fmt.Fprintf(out, "allocations:     %.0f per run, %.1f KiB per run\n",
		float64(after.Mallocs-before.Mallocs)/float64(n), float64(after.TotalAlloc-before.TotalAlloc)/1024/float64(n))
	fmt.Fprintf(out, "peak RSS:        %.0f MiB\n", float64(usage.Maxrss)/1024)
	return nil
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
