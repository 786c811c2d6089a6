// Command kfp-task runs inside the shared Tasks' steps, beside the provider
// image: it writes the Task's inputs (JSON params) into the shared volume,
// and turns what the provider left behind into the Task's results. It ships
// in the operator's image and needs no shell, so steps stay distroless. It is
// also the launcher of compiled KFP pipelines (package kfpir): their prepare
// step runs its mkdir, and a task under KFP's executor protocol runs its
// launch (the component's container wrapped: internal/launcher). For a Provider with spec.serviceImage it is the
// provider step itself, calling the provider service (service*.go), and the
// events relay beside the service (relay.go).
//
//	kfp-task write --file /kfp/resource.json=KFP_RESOURCE [--file PATH=ENV ...]
//	kfp-task exec --env-from /kfp/pipeline-config.yaml -- COMMAND ARGS...
//	kfp-task stage --from FILE --to FILE [--replace] (--digest sha256:HEX | --digest-result FILE)
//	kfp-task report --output /kfp/output.json --exit-code FILE --id-result FILE --error-result FILE
//	kfp-task mkdir DIR...
//	kfp-task fetch|store --root s3://BUCKET/PREFIX [--endpoint H:P --region R --insecure] [--mkdir DIR] URI...
//	kfp-task install PATH
//	kfp-task condition --condition CEL --result PATH [--param KEY TYPE TEXT ...]
//	kfp-task items --list JSON --result SELECTOR PATH [--result SELECTOR PATH ...]
//	kfp-task pvc create --owner NS --run RUN --result PATH --access-modes JSON --size Q [--pvc-name N | --pvc-name-suffix S] ...
//	kfp-task pvc delete --owner NS --pvc-name N
//	kfp-task launch --spec JSON --output-uri URI --output-dir DIR [--param N=TEXT] [--artifact N=URI] [--result N=PATH]
//	                [--item-type N=TYPE --item N=TEXT ...] [--collect-rest N=TYPE ... -- TEXT...]
//	kfp-task KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]
//	kfp-task relay-events --listen 127.0.0.1:8099 --to URL --token-file FILE [--ca-file FILE]
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Getenv); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code) // the component's own failure, already on its stderr
		}
		fmt.Fprintln(os.Stderr, "kfp-task:", err)
		os.Exit(1)
	}
}
