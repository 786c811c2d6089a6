package release

import (
	"runtime"
	"sync"
)

// inOrder works the items [0, n) in chunks of at most chunk items on up to
// workers goroutines and hands each chunk's result to emit in item order,
// so the output is the same as a sequential loop's. At most 2×workers chunks
// are worked ahead of emit, which bounds the memory held. The first error in
// item order is returned, from work or emit; nothing after it is emitted,
// and chunks not yet started are not worked.
//
// A release is thousands of runs that do not depend on each other: building
// and printing them is the whole of prgen's time, and it divides across cores.
func inOrder[T any](n, chunk, workers int, work func(lo, hi int) (T, error), emit func(T) error) error {
	if n <= 0 {
		return nil
	}
	chunk = max(chunk, 1)
	chunks := (n + chunk - 1) / chunk
	workers = max(min(workers, chunks), 1)
	type result struct {
		value T
		err   error
	}
	results := make([]chan result, chunks)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	ahead := make(chan struct{}, 2*workers) // a token per chunk worked and not yet emitted
	stop := make(chan struct{})
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	take := func() (int, bool) {
		select {
		case ahead <- struct{}{}:
		case <-stop:
			return 0, false
		}
		mu.Lock()
		defer mu.Unlock()
		if next == chunks {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				lo := i * chunk
				value, err := work(lo, min(lo+chunk, n))
				results[i] <- result{value, err}
			}
		}()
	}
	var err error
	for i := range chunks {
		r := <-results[i]
		if err = r.err; err == nil {
			err = emit(r.value)
		}
		if err != nil {
			break
		}
		<-ahead
	}
	close(stop)
	wg.Wait()
	return err
}

// workers is how many goroutines build or print runs: one per core Go may use.
func workers() int { return runtime.GOMAXPROCS(0) }
