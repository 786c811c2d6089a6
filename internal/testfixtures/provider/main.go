// Command provider is a TEST FIXTURE, not the product's backend: a provider
// implementing the CLI contract of tasks/README.md whose behaviour the
// end-to-end tests control through the Provider's spec.parameters:
//
//	parameters:
//	  fixture:
//	    "Pipeline/my-pipeline": {"error": "quota exceeded", "exitCode": 1, "sleep": "20s"}
//	    "*": {...}          # every resource without an entry of its own
//
// Without an entry it succeeds with a stable id. It prints the resource and the provider
// configuration it received to stdout, so a test can read it back from the step's log. It
// reads both with the contract's types (internal/contract) and refuses, with a provider error,
// a contractVersion it does not know.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

type behaviour struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
	Sleep    string `json:"sleep"`
	NoOutput bool   `json:"noOutput"`
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: provider KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]")
	}
	kind, op := os.Args[1], os.Args[2]
	fs := flag.NewFlagSet("provider", flag.ExitOnError)
	configPath := fs.String("provider-config", "", "")
	resourcePath := fs.String("resource", "", "")
	outputPath := fs.String("output", "", "")
	definition := fs.String("pipeline-definition", "", "")
	_ = fs.Parse(os.Args[3:])

	rawResource, err := os.ReadFile(*resourcePath)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("fixture provider: %s %s received resource %s\n", kind, op, rawResource)
	var res contract.Resource
	var cfg contract.ProviderConfig
	if err := json.Unmarshal(rawResource, &res); err != nil {
		fail("resource: " + err.Error())
	}
	rawConfig, err := os.ReadFile(*configPath)
	if err != nil {
		fail("provider config: " + err.Error())
	}
	fmt.Printf("fixture provider: %s %s received provider config %s\n", kind, op, rawConfig)
	if err := json.Unmarshal(rawConfig, &cfg); err != nil {
		fail("provider config: " + err.Error())
	}
	for _, doc := range []struct{ name, version string }{
		{"resource", res.ContractVersion}, {"provider-config", cfg.ContractVersion},
	} {
		if err := contract.CheckVersion("provider", doc.name, doc.version); err != nil {
			answer(*outputPath, contract.Output{Error: err.Error()})
			fmt.Printf("fixture provider: %s %s refused: %v\n", kind, op, err)
			os.Exit(0)
		}
	}
	if *definition != "" {
		def, err := os.ReadFile(*definition)
		if err != nil {
			fail("pipeline definition: " + err.Error())
		}
		fmt.Printf("fixture provider: pipeline definition %s\n", def)
		_, err = os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token")
		fmt.Printf("fixture provider: environment {\"serviceAccountToken\": %t}\n", err == nil)
	}
	b := lookup(cfg, res.Kind+"/"+res.Metadata.Name)
	if b.Sleep != "" {
		d, err := time.ParseDuration(b.Sleep)
		if err != nil {
			fail("sleep: " + err.Error())
		}
		time.Sleep(d)
	}
	id := res.Status.Provider.ID
	if id == "" {
		id = fmt.Sprintf("%s/%s/%s", kind, res.Metadata.Namespace, res.Metadata.Name)
	}
	out := contract.Output{ID: id}
	if b.Error != "" {
		out = contract.Output{Error: b.Error}
	}
	if !b.NoOutput {
		answer(*outputPath, out)
	}
	fmt.Printf("fixture provider: %s %s answered %+v\n", kind, op, out)
	os.Exit(b.ExitCode)
}

// answer writes the provider's output.
func answer(path string, out contract.Output) {
	data, _ := json.Marshal(out)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		fail(err.Error())
	}
}

func lookup(cfg contract.ProviderConfig, key string) behaviour {
	var table map[string]behaviour
	if raw, ok := cfg.Spec.Parameters["fixture"]; ok {
		if err := json.Unmarshal(raw.Raw, &table); err != nil {
			fail("parameters.fixture: " + err.Error())
		}
	}
	if b, ok := table[key]; ok {
		return b
	}
	return table["*"]
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fixture provider:", msg)
	os.Exit(2)
}
