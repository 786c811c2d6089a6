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
// files and which tokens exist in the compile step's view, what the API
// server answers it ("apiServer"), and where it planted a link for the
// seal step to write through ("planted"): the shared Tasks defeat all three.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	iofs "io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
	// Any token anywhere a pod gets one.
	_ = filepath.WalkDir("/var/run/secrets", func(path string, d iofs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "token" && !slices.Contains(sees, path) {
			sees = append(sees, path)
		}
		return nil
	})
	def, _ := json.Marshal(map[string]any{"pipeline": cfg.Name, "image": cfg.Image, "env": env, "sees": sees,
		"apiServer": askAPIServer(cfg.Namespace), "planted": plant()})
	fmt.Printf("fixture compiler: compiled %s\n", def)
	return os.WriteFile(*outputPath, def, 0o644)
}

// askAPIServer is what the API server answers this pod, with whatever
// credentials it has, when asked for its namespace's secrets: the HTTP
// status, or why there was no answer.
func askAPIServer(namespace string) string {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" {
		return "no KUBERNETES_SERVICE_HOST"
	}
	req, err := http.NewRequest(http.MethodGet, "https://"+net.JoinHostPort(host, port)+"/api/v1/namespaces/"+namespace+"/secrets", nil)
	if err != nil {
		return err.Error()
	}
	if token, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	// The fixture only reads the status: the server's identity does not matter here.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}

// plant leaves a link where the compile Task's seal step writes the
// definition, pointing at the compiler's input: the seal step must replace
// it, not write through it. It says where it planted one.
func plant() string {
	const target = "/workspace/definition/pipeline.yaml"
	if _, err := os.Stat("/workspace/definition"); err != nil {
		return ""
	}
	if err := os.Symlink("/kfp/pipeline-config.yaml", target); err != nil {
		return "failed: " + err.Error()
	}
	return target
}
