// Package measure holds what the benchmark programs under bench/ measure
// with: a process's CPU time and memory from /proc, an operator's API
// requests from its metrics, and a bounded fan-out for creating objects.
package measure

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// CPUSeconds is a process's user + system CPU time so far (0 if it is gone).
func CPUSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, seconds := parsePIDStat(string(data))
	return seconds
}

// StatusKiB is a figure of /proc/PID/status in KiB, such as VmHWM (peak
// RSS) or VmRSS; 0 if the process or the field is gone.
func StatusKiB(pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				kb, _ := strconv.Atoi(f[0])
				return kb
			}
		}
	}
	return 0
}

// RequestsByMethod sums client-go's rest_client_requests_total (every
// attempt, any answer) by HTTP method from a Prometheus text exposition.
func RequestsByMethod(metrics io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	lines := bufio.NewScanner(metrics)
	lines.Buffer(make([]byte, 64*1024), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `method="`)
		method, _, _ := strings.Cut(rest, `"`)
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		out[method] += v
	}
	return out, lines.Err()
}

// Parallel runs fn for 0..n-1 on workers goroutines, stops handing out
// work when ctx ends, and returns the first error (or ctx's).
func Parallel(ctx context.Context, n, workers int, fn func(int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
