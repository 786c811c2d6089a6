// Command gen writes the JSON Schemas of the provider contract's documents
// (internal/contract) to tasks/schema. `make manifests` runs it from the
// repository's root; never edit those files by hand.
package main

import (
	"fmt"
	"os"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract/schema"
)

func main() {
	if err := schema.Write("tasks/schema"); err != nil {
		fmt.Fprintln(os.Stderr, "internal/contract/gen:", err)
		os.Exit(1)
	}
}
