package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Bounds on the arguments: enough for any demo, small enough that a typo
// fails at once rather than filling the artifacts volume or the task's
// memory limit.
const (
	minRows, maxRows     = 10, 1_000_000
	minEpochs, maxEpochs = 1, 1000
	maxLearningRate      = 10.0
)

// parseFlags parses args as the named string flags, every one required and
// non-empty (the IR always passes them all), and refuses positional
// arguments. Values are checked by the caller: flag's own integer parsing
// would read "010" as octal.
func parseFlags(cmd string, args []string, names ...string) (map[string]string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the returned error says it all
	values := make(map[string]*string, len(names))
	for _, n := range names {
		values[n] = fs.String(n, "", "")
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		if *values[n] == "" {
			return nil, fmt.Errorf("%s: --%s is required", cmd, n)
		}
		out[n] = *values[n]
	}
	return out, nil
}

func parseInt(cmd, name, s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: --%s %q is not a whole number", cmd, name, s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%s: --%s %d is out of range: want %d to %d", cmd, name, n, lo, hi)
	}
	return n, nil
}

func generateCmd(args []string, stdout io.Writer) error {
	f, err := parseFlags("generate", args, "rows", "dataset", "row-count")
	if err != nil {
		return err
	}
	rows, err := parseInt("generate", "rows", f["rows"], minRows, maxRows)
	if err != nil {
		return err
	}
	if err := writeFile(f["dataset"], func(w io.Writer) error { return writeDataset(w, generate(rows)) }); err != nil {
		return fmt.Errorf("generate: writing the dataset: %w", err)
	}
	if err := writeResult(f["row-count"], strconv.Itoa(rows)); err != nil {
		return fmt.Errorf("generate: writing the row count: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "generated %d rows into %s\n", rows, f["dataset"])
	return err
}

func trainCmd(args []string, stdout io.Writer, getenv func(string) string) error {
	f, err := parseFlags("train", args, "dataset", "rows", "learning-rate", "epochs", "model", "model-uri")
	if err != nil {
		return err
	}
	var debug bool
	switch level := getenv("DEMO_LOG_LEVEL"); level {
	case "", "info":
	case "debug":
		debug = true
	default:
		return fmt.Errorf("train: DEMO_LOG_LEVEL %q: want info or debug", level)
	}
	rows, err := parseInt("train", "rows", f["rows"], minRows, maxRows)
	if err != nil {
		return err
	}
	epochs, err := parseInt("train", "epochs", f["epochs"], minEpochs, maxEpochs)
	if err != nil {
		return err
	}
	lr, err := strconv.ParseFloat(f["learning-rate"], 64)
	if err != nil || math.IsNaN(lr) || lr <= 0 || lr > maxLearningRate {
		return fmt.Errorf("train: --learning-rate %q: want a number above 0 and at most %g", f["learning-rate"], maxLearningRate)
	}
	data, err := readDataset(f["dataset"])
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	// rows is generate's row count: a mismatch means the task read another
	// run's dataset, or a truncated one.
	if len(data) != rows {
		return fmt.Errorf("train: the dataset %s has %d rows, but --rows says %d", f["dataset"], len(data), rows)
	}
	fmt.Fprintf(stdout, "training a logistic regression on %d rows: learning rate %g, %d epochs\n", rows, lr, epochs)
	m, err := train(data, lr, epochs, func(epoch int, loss float64, m model) {
		fmt.Fprintf(stdout, "epoch %d/%d loss %.4f\n", epoch, epochs, loss)
		if debug {
			fmt.Fprintf(stdout, "  weights %v bias %g\n", m.Weights, m.Bias)
		}
	})
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := writeFile(f["model"], m.write); err != nil {
		return fmt.Errorf("train: writing the model: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "model written to %s\n", f["model-uri"])
	return err
}

func evaluateCmd(args []string, stdout io.Writer) error {
	f, err := parseFlags("evaluate", args, "dataset", "model", "accuracy")
	if err != nil {
		return err
	}
	m, err := readModel(f["model"])
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	data, err := readDataset(f["dataset"])
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	acc := m.accuracy(data)
	if _, err := fmt.Fprintf(stdout, "accuracy %.4f\n", acc); err != nil {
		return err
	}
	if err := writeResult(f["accuracy"], strconv.FormatFloat(acc, 'f', -1, 64)); err != nil {
		return fmt.Errorf("evaluate: writing the accuracy: %w", err)
	}
	return nil
}

// writeFile creates path and its missing parents and fills it with write.
// Files are readable by all: the next task may run as another user.
func writeFile(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeResult writes a Tekton result: the value alone, no newline, since
// Tekton passes the file's bytes on as they are.
func writeResult(path, value string) error {
	return writeFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, value)
		return err
	})
}
