// Command prgen prints Tekton PipelineRuns for a release matrix, one per
// (application, version) pair, for `kubectl create -f -`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(mainCode())
}

// mainCode runs prgen on the process's arguments with a context that SIGINT
// and SIGTERM cancel, so Ctrl-C stops a digest resolution waiting on a
// registry at once; a second signal kills the process as usual.
func mainCode() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore the default action for the next signal
	}()
	if err := execute(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		return 1
	}
	return 0
}
