// Command compiler is a TEST FIXTURE, not a product compiler: a compiler
// image for the shared Tasks' compile contract (tasks/README.md).
//
// Run with one argument DIR (the inject-compiler step), it copies itself to
// DIR/compile.sh. Run as compile.sh --pipeline_config F --output_file F (the
// compile step, inside the pipeline's image), it writes a definition naming
// the pipeline, its image and the environment it was compiled with; a
// framework parameter "fixture-fail" makes it exit 1 with that message. It
// reads the pipeline config with the contract's type (internal/contract) and
// refuses, exiting 1 with the reason, a contractVersion it does not know.
// The definition also lists ("sees") which of the provider's secrets and
// files exist in the compile step's view: the shared Tasks keep them out.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/compilerinject"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func main() {
	if len(os.Args) == 2 && !strings.HasPrefix(os.Args[1], "-") {
		if err := compilerinject.Self(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "fixture compiler:", err)
			os.Exit(1)
		}
		return
	}
	if err := compile(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fixture compiler:", err)
		os.Exit(1)
	}
}

func compile(args []string) error {
	fs := flag.NewFlagSet("compile.sh", flag.ContinueOnError)
	configPath := fs.String("pipeline_config", "", "")
	outputPath := fs.String("output_file", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*configPath)
	if err != nil {
		return err
	}
	var cfg contract.CompileConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("pipeline config: %w", err)
	}
	if err := contract.CheckVersion("compiler", "pipeline-config", cfg.ContractVersion); err != nil {
		return err
	}
	if raw, ok := cfg.Framework.Parameters["fixture-fail"]; ok {
		return fmt.Errorf("compilation failed: %s", raw.Raw)
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PIPELINE_") {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	// What tenant code can see, for the end-to-end tests: no service account
	// token, and none of the provider's files.
	sees := []string{}
	for _, p := range []string{"/var/run/secrets/kubernetes.io/serviceaccount/token", "/kfp/resource.json", "/kfp/provider/config.json", "/kfp-compile"} {
		if _, err := os.Lstat(p); err == nil {
			sees = append(sees, p)
		}
	}
	def, _ := json.Marshal(map[string]any{"pipeline": cfg.Name, "image": cfg.Image, "env": env, "sees": sees})
	fmt.Printf("fixture compiler: compiled %s\n", def)
	return os.WriteFile(*outputPath, def, 0o644)
}
