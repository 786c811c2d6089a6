package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// python answers the python3 invocations the SDK's command makes.
func python(args []string) error {
	if len(args) >= 2 && args[0] == "-m" {
		switch args[1] {
		case "pip", "ensurepip":
			return nil // kfp is "installed": this fixture is its executor
		case "kfp.dsl.executor_main":
			return executorMain(args[2:])
		}
	}
	return fmt.Errorf("python3: only -m pip, -m ensurepip and -m kfp.dsl.executor_main are supported (fixture); got %q", args)
}

// executorInput is the part of KFP's ExecutorInput JSON the executor reads.
type executorInput struct {
	Inputs struct {
		ParameterValues map[string]any `json:"parameterValues"`
		Artifacts       map[string]struct {
			Artifacts []artifact `json:"artifacts"`
		} `json:"artifacts"`
	} `json:"inputs"`
	Outputs struct {
		Parameters map[string]struct {
			OutputFile string `json:"outputFile"`
		} `json:"parameters"`
		Artifacts map[string]struct {
			Artifacts []artifact `json:"artifacts"`
		} `json:"artifacts"`
		OutputFile string `json:"outputFile"`
	} `json:"outputs"`
}

type artifact struct {
	Name     string         `json:"name"`
	URI      string         `json:"uri"`
	Metadata map[string]any `json:"metadata"`
}

// path is the SDK's Artifact.path: the local mount of a gs://, minio://
// or s3:// URI, and none for any other.
func (a artifact) path() (string, error) {
	for scheme, mount := range map[string]string{"gs://": "/gcs/", "minio://": "/minio/", "s3://": "/s3/"} {
		if rest, ok := strings.CutPrefix(a.URI, scheme); ok {
			return mount + rest, nil
		}
	}
	return "", fmt.Errorf("TypeError: artifact %s has no path: the SDK maps only gs://, minio:// and s3:// URIs (uri %q)", a.Name, a.URI)
}

// executorMain is kfp.dsl.executor_main for the functions of functions.go.
func executorMain(args []string) error {
	fs := flag.NewFlagSet("executor_main", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	module := fs.String("component_module_path", "", "")
	input := fs.String("executor_input", "", "")
	function := fs.String("function_to_execute", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *module != "" {
		if _, err := os.Stat(*module); err != nil {
			return fmt.Errorf("executor_main: the component module: %w", err)
		}
	}
	var in executorInput
	if err := json.Unmarshal([]byte(*input), &in); err != nil {
		return fmt.Errorf("executor_main: --executor_input is not JSON: %w", err)
	}
	fn, ok := functions[*function]
	if !ok {
		return fmt.Errorf("executor_main: no function %q in the fixture", *function)
	}
	outputs := map[string]*artifact{}
	for name, list := range in.Outputs.Artifacts {
		a := list.Artifacts[0]
		p, err := a.path()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if a.Metadata == nil {
			a.Metadata = map[string]any{}
		}
		outputs[name] = &a
	}
	ret, err := fn(in.Inputs.ParameterValues, outputs)
	if err != nil {
		return fmt.Errorf("Traceback (most recent call last):\n  %s: %w", *function, err) //nolint:staticcheck // ST1005: the message imitates Python's traceback
	}
	out := map[string]any{}
	if ret != nil {
		if _, declared := in.Outputs.Parameters["Output"]; !declared {
			return errors.New("executor_main: the function returned a value but the component declares no Output")
		}
		out["parameterValues"] = map[string]any{"Output": ret}
	}
	if len(outputs) > 0 {
		arts := map[string]any{}
		for name, a := range outputs {
			arts[name] = map[string]any{"artifacts": []any{map[string]any{"name": a.Name, "uri": a.URI, "metadata": a.Metadata}}}
		}
		out["artifacts"] = arts
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(in.Outputs.OutputFile), 0o755); err != nil {
		return err
	}
	return os.WriteFile(in.Outputs.OutputFile, data, 0o644)
}
