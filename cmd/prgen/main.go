// Command prgen prints Tekton PipelineRuns for a release matrix, one per
// (application, version) pair, for `kubectl create -f -`.
package main

import (
	"os"
)

func main() {
	if err := newCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}
