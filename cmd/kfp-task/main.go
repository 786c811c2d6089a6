// Command kfp-task runs inside the shared Tasks' steps, beside the provider
// image: it writes the Task's inputs (JSON params) into the shared volume,
// and turns what the provider left behind into the Task's results. It ships
// in the operator's image and needs no shell, so steps stay distroless. It is
// also the launcher of compiled KFP pipelines (package kfpir): their prepare
// step runs its mkdir.
//
//	kfp-task write --file /kfp/resource.json=KFP_RESOURCE [--file PATH=ENV ...]
//	kfp-task exec --env-from /kfp/pipeline-config.yaml -- COMMAND ARGS...
//	kfp-task stage --from /kfp-compile/pipeline.yaml --to /kfp/pipeline.yaml
//	kfp-task report --output /kfp/output.json --exit-code FILE --id-result FILE --error-result FILE
//	kfp-task report-compiled --pipeline-definition FILE --id-result FILE --error-result FILE
//	kfp-task mkdir DIR...
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "kfp-task:", err)
		os.Exit(1)
	}
}
