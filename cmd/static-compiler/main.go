// Command static-compiler is the compiler of the "static" framework for the
// shared Tasks' compile contract (tasks/README.md, "Steps and files"). It
// compiles nothing: the pipeline's image already holds a compiled KFP v2 IR
// file, which it checks and hands on byte for byte. No Python runs.
//
// Run with one argument DIR (the inject-compiler step, in the compiler's
// image), it copies itself to DIR/compile.sh. Run as
//
//	compile.sh --pipeline_config FILE --output_file FILE
//
// (the compile step, in the pipeline's image; the same command line as
// kfp-operator's compilers), it reads the pipeline config, takes the IR's
// path from the framework parameter pipelineFile (a JSON string, default
// /pipeline.yaml), and copies that file to the output if it is a regular
// file of at most 1 MiB that parses as KFP IR. Otherwise it exits 1 with
// the reason on stderr, so a wrong file fails the Pipeline's compile step
// rather than a later run.
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
	"syscall"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/compilerinject"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

const (
	// pipelineFileParam is the framework parameter naming the IR file.
	pipelineFileParam   = "pipelineFile"
	defaultPipelineFile = "/pipeline.yaml"
	// maxIRBytes bounds the IR file. The Tekton Pipeline compiled from it
	// must fit in 1 MiB as well (kfpir.DefaultMaxBytes), and the IR is not
	// smaller than the Pipeline, so a bigger file could never run.
	maxIRBytes = 1 << 20
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "static compiler:", err)
		os.Exit(1)
	}
}

func run(args []string, log io.Writer) error {
	// One argument not starting with "-" is the inject-compiler step's DIR.
	if len(args) == 1 && !strings.HasPrefix(args[0], "-") {
		return compilerinject.Self(args[0])
	}
	fs := flag.NewFlagSet("compile.sh", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("pipeline_config", "", "the pipeline config (JSON)")
	outputPath := fs.String("output_file", "", "where to write the compiled pipeline")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (usage: compile.sh --pipeline_config FILE --output_file FILE, or static-compiler DIR)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *configPath == "" || *outputPath == "" {
		return errors.New("--pipeline_config and --output_file are required")
	}
	return compile(*configPath, *outputPath, log)
}

// compile checks the IR file the pipeline config names and writes it,
// unchanged, to outputPath. Nothing is written when a check fails.
func compile(configPath, outputPath string, log io.Writer) error {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return fmt.Errorf("reading the pipeline config: %w", err)
	}
	var cfg contract.CompileConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("the pipeline config %s: %w", configPath, err)
	}
	if err := contract.CheckVersion("compiler", "pipeline-config", cfg.ContractVersion); err != nil {
		return err
	}
	path, err := pipelineFile(cfg.Framework.Parameters)
	if err != nil {
		return err
	}
	ir, err := readIR(path)
	if err != nil {
		return err
	}
	spec, err := kfpir.Parse(ir)
	if err != nil {
		return fmt.Errorf("the pipeline file %s in image %s is not a compiled KFP pipeline: %w", path, cfg.Image, err)
	}
	if err := os.WriteFile(outputPath, ir, 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(log, "static compiler: %s (KFP pipeline %q, %d bytes) passed on unchanged for Pipeline %s/%s\n",
		path, spec.PipelineInfo.Name, len(ir), cfg.Namespace, cfg.Name)
	return err
}

// pipelineFile is the IR's path in the pipeline image: the framework
// parameter pipelineFile, or /pipeline.yaml. It must be absolute, as the
// compile step's working directory is whatever the image sets.
func pipelineFile(params map[string]apiextensionsv1.JSON) (string, error) {
	raw, ok := params[pipelineFileParam]
	if !ok {
		return defaultPipelineFile, nil
	}
	var path string
	if err := json.Unmarshal(raw.Raw, &path); err != nil {
		return "", fmt.Errorf("the framework parameter %s must be a string (a path in the pipeline image), not %s", pipelineFileParam, raw.Raw)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("the framework parameter %s %q must be an absolute path in the pipeline image", pipelineFileParam, path)
	}
	return path, nil
}

// readIR reads the IR file, refusing anything but a regular file of at most
// maxIRBytes. A symbolic link is followed: the file is the tenant's own
// image's, and this step sees none of the provider's files. O_NONBLOCK
// keeps a FIFO from blocking the open; the read is bounded too, since a
// file's stated size may be wrong (those of /proc say 0).
func readIR(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		err = &os.PathError{Op: "open", Path: path, Err: err}
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the pipeline file: %w (the framework parameter %s names the compiled pipeline's path in the image; default %s)",
				err, pipelineFileParam, defaultPipelineFile)
		}
		return nil, fmt.Errorf("the pipeline file: %w", err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("the pipeline file %s is not a regular file (it is %s)", path, fileKind(info.Mode()))
	}
	tooBig := fmt.Errorf("the pipeline file %s is larger than %d bytes (1 MiB)", path, maxIRBytes)
	if info.Size() > maxIRBytes {
		return nil, tooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIRBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the pipeline file: %w", err)
	}
	if len(data) > maxIRBytes {
		return nil, tooBig
	}
	return data, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "of mode " + m.Type().String()
}
