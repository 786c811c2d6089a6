// Command tekton-provider is the Tekton provider (internal/tektonprovider):
// the project's own backend, which runs ML pipelines as Tekton
// PipelineRuns. Its image holds it as /provider and the launcher helper as
// /kfp/bin/kfp-task. It has two entry points:
//
//	provider KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]
//
// the CLI contract of tasks/README.md, run in the shared Tasks' provider
// step with the Provider's service account; and
//
//	provider trigger --pipelinerun base64:JSON [--start T] [--end T]
//
// run by a RunSchedule's CronJob, which creates the PipelineRun of one
// scheduled time (named after the Job, from $KFP_JOB_NAME).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider"
)

// namespaceFile is where the kubelet puts the pod's namespace beside the
// service account token.
const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// operationTimeout bounds one operation's API calls.
const operationTimeout = 2 * time.Minute

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), operationTimeout)
	defer cancel()
	if len(os.Args) >= 2 && os.Args[1] == "trigger" {
		if err := trigger(ctx, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "tekton provider: trigger:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(operate(ctx, os.Args[1:]))
}

// operate runs one contract operation. It exits 0 once it wrote an answer,
// success or failure; non-zero only when it could not write one.
func operate(ctx context.Context, args []string) int {
	if len(args) < 2 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(os.Stderr, "usage: provider KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]")
		return 2
	}
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	configPath := fs.String("provider-config", "", "the Provider's configuration (JSON)")
	resourcePath := fs.String("resource", "", "the resource (JSON)")
	outputPath := fs.String("output", "", "where to write the answer")
	definitionPath := fs.String("pipeline-definition", "", "the compiled pipeline (KFP v2 IR)")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	if *outputPath == "" {
		fmt.Fprintln(os.Stderr, "tekton provider: --output is required")
		return 2
	}
	req, err := readRequest(args[0], args[1], *configPath, *resourcePath, *definitionPath)
	var id string
	if err == nil {
		id, err = run(ctx, req)
	}
	out := contract.Output{ID: id}
	if err != nil {
		out = contract.Output{Error: err.Error()}
		fmt.Printf("tekton provider: %s %s failed: %v\n", args[0], args[1], err)
	} else {
		fmt.Printf("tekton provider: %s %s %s/%s: id %s\n", args[0], args[1], req.Resource.Metadata.Namespace, req.Resource.Metadata.Name, id)
	}
	data, _ := json.Marshal(out)
	if err := os.WriteFile(*outputPath, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tekton provider: writing the answer:", err)
		return 1
	}
	return 0
}

func readRequest(kind, op, configPath, resourcePath, definitionPath string) (tektonprovider.Request, error) {
	req := tektonprovider.Request{Kind: kind, Operation: op}
	if err := readJSON("resource", resourcePath, &req.Resource); err != nil {
		return req, err
	}
	if err := readJSON("provider config", configPath, &req.Config); err != nil {
		return req, err
	}
	for _, doc := range []struct{ name, version string }{
		{"resource", req.Resource.ContractVersion}, {"provider-config", req.Config.ContractVersion},
	} {
		if err := contract.CheckVersion("provider", doc.name, doc.version); err != nil {
			return req, err
		}
	}
	if definitionPath != "" {
		def, err := os.ReadFile(definitionPath)
		if err != nil {
			return req, fmt.Errorf("reading the pipeline definition: %w", err)
		}
		req.Definition = def
	}
	return req, nil
}

func readJSON(what, path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the %s: %w", what, err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("the %s is not valid: %w", what, err)
	}
	return nil
}

func run(ctx context.Context, req tektonprovider.Request) (string, error) {
	c, ns, err := inCluster()
	if err != nil {
		return "", err
	}
	b := &tektonprovider.Backend{Client: c, Namespace: ns, Image: req.Config.Spec.Image}
	return b.Do(ctx, req)
}

func inCluster() (client.Client, string, error) {
	ns, err := os.ReadFile(namespaceFile)
	if err != nil {
		return nil, "", fmt.Errorf("the provider needs its service account's credentials: %w", err)
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, "", err
	}
	return c, strings.TrimSpace(string(ns)), nil
}

func trigger(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	encoded := fs.String("pipelinerun", "", "the PipelineRun template, base64: then JSON")
	start := fs.String("start", "", "no run before this time (RFC 3339)")
	end := fs.String("end", "", "no run after this time (RFC 3339)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := contract.DecodeParam(*encoded)
	if err != nil {
		return err
	}
	var template tektonv1.PipelineRun
	if err := json.Unmarshal(data, &template); err != nil {
		return fmt.Errorf("the PipelineRun template: %w", err)
	}
	var window [2]time.Time
	for i, s := range []string{*start, *end} {
		if s == "" {
			continue
		}
		if window[i], err = time.Parse(time.RFC3339, s); err != nil {
			return err
		}
	}
	job := os.Getenv(tektonprovider.EnvJobName)
	if job == "" {
		return errors.New(tektonprovider.EnvJobName + " is not set: the trigger runs in a CronJob's Job")
	}
	c, _, err := inCluster()
	if err != nil {
		return err
	}
	created, err := tektonprovider.Trigger(ctx, c, &template, job, window[0], window[1])
	if err != nil {
		return err
	}
	fmt.Printf("tekton provider: trigger %s: created %t\n", job, created)
	return nil
}
