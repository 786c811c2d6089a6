// Command kfp-demo is the container program of the project's demo ML
// pipeline (pipeline.yaml, a compiled KFP v2 IR): a toy, deterministic
// machine-learning job in pure Go, so the demo image is one static binary
// with no shell, no Python and no network.
//
//	kfp-demo generate --rows N --dataset PATH --row-count FILE
//	kfp-demo train --dataset PATH --rows N --learning-rate F --epochs E --model PATH --model-uri URI
//	kfp-demo evaluate --dataset PATH --model PATH --accuracy FILE
//	kfp-demo fail --message M
//	kfp-demo show --name N --value V
//
// generate writes a seeded synthetic binary-classification dataset (CSV
// x1,x2,label); train fits a logistic regression by stochastic gradient
// descent and writes it as JSON; evaluate reports the model's accuracy on the
// dataset. FILE arguments are Tekton result files and receive the bare
// value, without a newline. fail prints M on stderr and exits 1, so tests
// can make a failing task from the same image. show prints "N = V", the
// one step of consumer.yaml, a pipeline that reports a parameter it was
// given (in the demo, an upstream run's artifact location). DEMO_LOG_LEVEL (info, the
// default, or debug) sets how much train logs.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Getenv)
	var f failure
	switch {
	case errors.As(err, &f):
		fmt.Fprintln(os.Stderr, string(f))
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "kfp-demo:", err)
		os.Exit(1)
	}
}

// failure is the message of the fail command, printed as given.
type failure string

func (f failure) Error() string { return string(f) }

func run(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return errors.New("usage: kfp-demo generate|train|evaluate|show|fail [flags]")
	}
	switch args[0] {
	case "generate":
		return generateCmd(args[1:], stdout)
	case "train":
		return trainCmd(args[1:], stdout, getenv)
	case "evaluate":
		return evaluateCmd(args[1:], stdout)
	case "show":
		f, err := parseFlags("show", args[1:], "name", "value")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s = %s\n", f["name"], f["value"])
		return err
	case "fail":
		f, err := parseFlags("fail", args[1:], "message")
		if err != nil {
			return err
		}
		return failure(f["message"])
	}
	return fmt.Errorf("unknown command %q (want generate, train, evaluate, show or fail)", args[0])
}
