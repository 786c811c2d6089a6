// Command kfpexecutor is a test fixture: the parts of a Python image a
// KFP Python function component needs, without Python (the KFP SDK cannot
// be installed here). Installed as /bin/sh it is a POSIX shell
// (mvdan.cc/sh) that runs the command the SDK compiles unchanged; as
// python3 (also inside that shell) it answers `-m pip install` and
// `-m ensurepip` with success, and `-m kfp.dsl.executor_main` as KFP's
// executor does for the functions of functions.go: it reads
// --executor_input, calls the function with its parameterValues, and
// writes the return value and the output artifacts' metadata to the
// executor output file, creating its directory. An artifact's local path
// follows the SDK's rule (gs://, minio://, s3:// only).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func main() {
	var err error
	switch filepath.Base(os.Args[0]) {
	case "python3", "python":
		err = python(os.Args[1:])
	default:
		err = shell(os.Args[1:])
	}
	var status interp.ExitStatus
	if errors.As(err, &status) {
		os.Exit(int(status))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// shell runs `sh [-e] -c SCRIPT [NAME [ARG...]]` (flags may be joined, -ec).
func shell(args []string) error {
	var script *string
	errexit := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && script == nil {
		flags := args[0][1:]
		args = args[1:]
		for _, f := range flags {
			switch f {
			case 'e':
				errexit = true
			case 'c':
				if len(args) == 0 {
					return errors.New("sh: -c needs a script")
				}
				s := args[0]
				script, args = &s, args[1:]
			default:
				return fmt.Errorf("sh: unsupported option -%c (fixture)", f)
			}
		}
	}
	if script == nil {
		return errors.New("sh: only sh -c SCRIPT is supported (fixture)")
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(*script), "sh")
	if err != nil {
		return err
	}
	params := []string{}
	if errexit {
		params = append(params, "-e")
	}
	if len(args) > 0 {
		params = append(params, "--")
		params = append(params, args[1:]...)
	}
	opts := []interp.RunnerOption{
		interp.Params(params...),
		interp.StdIO(os.Stdin, os.Stdout, os.Stderr),
		interp.ExecHandlers(func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, argv []string) error {
				switch argv[0] {
				case "python3", "python":
					return python(argv[1:])
				case "mktemp":
					return mktemp(ctx, argv[1:])
				}
				return next(ctx, argv)
			}
		}),
	}
	runner, err := interp.New(opts...)
	if err != nil {
		return err
	}
	return runner.Run(context.Background(), withArg0(file, args))
}

// withArg0 is file; $0 is set through the runner's name where given.
func withArg0(file *syntax.File, args []string) *syntax.File {
	if len(args) > 0 {
		file.Name = args[0]
	}
	return file
}

func mktemp(ctx context.Context, args []string) error {
	if len(args) != 1 || args[0] != "-d" {
		return fmt.Errorf("mktemp: only mktemp -d is supported (fixture)")
	}
	dir, err := os.MkdirTemp("", "tmp.")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(interp.HandlerCtx(ctx).Stdout, dir)
	return err
}
