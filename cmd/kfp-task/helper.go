package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Limits on the results. Tekton reads a step's results from its termination
// message, JSON-encoded (a `<` takes six bytes there, a newline two), and the
// kubelet keeps at most 4096 bytes of it, and less in pods of many
// containers (12 KiB shared among them). The Task passes the budget of its
// pod (--results-budget); the limits apply to the escaped form, with room
// for Tekton's framing (keys and types).
const (
	maxIDEscaped         = 1024
	defaultResultsBudget = 4096
	resultsFraming       = 256
)

func run(args []string, getenv func(string) string) error {
	if len(args) == 0 {
		return errors.New("usage: kfp-task write|exec|stage|report|mkdir|launch|condition|items|oneof|pvc|fetch|store|install|relay-events|KIND OPERATION [flags]")
	}
	switch args[0] {
	case "write":
		return write(args[1:], getenv)
	case "report":
		return report(args[1:])
	case "exec":
		return execWithEnv(args[1:], os.Environ(), syscall.Exec)
	case "stage":
		return stage(args[1:], os.Stdout)
	case "mkdir":
		return mkdirCmd(args[1:])
	case "launch":
		return launch(args[1:])
	case "condition":
		return condition(args[1:])
	case "items":
		return items(args[1:])
	case "fetch":
		return fetchCmd(args[1:], getenv)
	case "store":
		return storeCmd(args[1:], getenv)
	case "oneof":
		return oneof(args[1:])
	case "pvc":
		return pvcCmd(args[1:])
	case "install":
		if len(args) != 2 || !filepath.IsAbs(args[1]) {
			return errors.New("install: want one absolute path, where this binary is copied (for a step in another image)")
		}
		return copySelf(args[1])
	case "relay-events":
		return relayEvents(args[1:])
	case kindPipeline, kindRun, kindRunSchedule, kindExperiment:
		return serviceCmd(args[0], args[1:])
	}
	return fmt.Errorf("unknown command %q (want write, exec, stage, report, mkdir, launch, condition, items, oneof, pvc, fetch, store, install, relay-events, "+
		"or a provider service's KIND OPERATION: pipeline|run|runschedule|experiment create|update|delete)", args[0])
}

type fileFlags []string

func (f *fileFlags) String() string     { return strings.Join(*f, ",") }
func (f *fileFlags) Set(v string) error { *f = append(*f, v); return nil }

// write copies each named environment variable, which must hold a JSON
// value, into its file.
func write(args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("write", flag.ContinueOnError)
	var files fileFlags
	fs.Var(&files, "file", "PATH=ENV: write environment variable ENV (JSON) to PATH; repeatable")
	install := fs.String("install", "", "also copy this binary to PATH, for steps in other images")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *install != "" {
		if err := copySelf(*install); err != nil {
			return fmt.Errorf("write: installing the helper at %s: %w", *install, err)
		}
	}
	if len(files) == 0 {
		return errors.New("write: no --file given")
	}
	for _, f := range files {
		path, env, ok := strings.Cut(f, "=")
		if !ok || path == "" || env == "" {
			return fmt.Errorf("write: --file %q: want PATH=ENV", f)
		}
		value, err := contract.DecodeParam(getenv(env))
		if err != nil {
			return fmt.Errorf("write: %s: %w", env, err)
		}
		if !json.Valid(value) {
			return fmt.Errorf("write: %s is not valid JSON (%d bytes)", env, len(value))
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, value, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type resultFlags struct {
	id, errPath string
	budget      int
	failed      bool // an error was written
}

func (r *resultFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.id, "id-result", "", "file of the provider-id result")
	fs.StringVar(&r.errPath, "error-result", "", "file of the provider-error result")
	fs.IntVar(&r.budget, "results-budget", defaultResultsBudget, "bytes of the step's termination message the kubelet keeps")
}

func (r *resultFlags) write(id, msg string) error {
	defer func() { r.failed = msg != "" }()
	if r.id == "" || r.errPath == "" {
		return errors.New("--id-result and --error-result are required")
	}
	if n := escapedLen(id); n > maxIDEscaped {
		id, msg = "", fmt.Sprintf("provider returned an id of %d bytes (%d JSON-escaped); at most %d escaped bytes are allowed", len(id), n, maxIDEscaped)
	}
	if err := os.WriteFile(r.id, []byte(id), 0o644); err != nil {
		return err
	}
	return os.WriteFile(r.errPath, []byte(truncateEscaped(msg, r.budget-resultsFraming-escapedLen(id))), 0o644)
}

// errOperationFailed is returned after the results are written when the
// provider reported a failure: the step, and so the TaskRun and the
// PipelineRun, fail, so `tkn` and `kubectl` never show a failed backend
// operation as a success. Tekton keeps the results of a failed step.
var errOperationFailed = errors.New("the provider reported a failure (see the provider-error result)")

// report reads the provider's exit code and output and writes the results.
// A provider failure is reported through provider-error, so the controller
// sees the provider's own words, and then fails the step.
func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	outPath := fs.String("output", "", "file the provider wrote")
	exitCodePath := fs.String("exit-code", "", "file holding the provider step's exit code")
	var results resultFlags
	results.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	id, msg := outcome(*exitCodePath, *outPath)
	if err := results.write(id, msg); err != nil {
		return err
	}
	if results.failed {
		return errOperationFailed
	}
	return nil
}

// outcome is the id and error a provider's exit code and output amount to.
func outcome(exitCodePath, outPath string) (id, msg string) {
	code, codeErr := readExitCode(exitCodePath)
	out, outErr := readOutput(outPath)
	switch {
	case codeErr != nil:
		return "", "cannot tell how the provider ended: " + codeErr.Error()
	case code != 0 && out.Error != "":
		return out.ID, out.Error
	case code != 0:
		return out.ID, fmt.Sprintf("provider exited with code %d without an error message", code)
	case outErr != nil:
		return "", "provider exited with code 0 but " + outErr.Error()
	}
	return out.ID, out.Error
}

// stage copies a compiled definition from where one pod's steps could write
// it into a file the next reader trusts, and logs its digest. It reads only
// a regular file, never through a symbolic link (a link could name the
// provider's files or a token, in this step's view), and without blocking
// on a FIFO.
//
// In the compile pod it seals the compiler's output into the definition
// workspace (--replace: tenant steps mount the workspace too, so whatever
// they left at the destination is removed first; --digest-result: the
// digest is reported for the provider's pod). In the provider's pod it
// copies the sealed definition into the provider's volume, refusing it
// unless its digest is --digest.
func stage(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("stage", flag.ContinueOnError)
	from := fs.String("from", "", "the compiled definition")
	to := fs.String("to", "", "where the next reader reads it")
	replace := fs.Bool("replace", false, "remove whatever is at --to first (not a directory)")
	want := fs.String("digest", "", "refuse the definition unless its digest is this sha256:<hex>")
	digestResult := fs.String("digest-result", "", "write the definition's sha256:<hex> to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return errors.New("stage: --from and --to are required")
	}
	// Sealing (--digest-result) reports a digest; copying checks one,
	// always: an empty --digest (the compile task reported none) is
	// refused, never taken as "do not check".
	switch {
	case *digestResult == "" && *want == "":
		return errors.New("stage: --digest is empty: the compile task reported no digest of the definition, so it cannot be checked")
	case *want != "" && !validDigest(*want):
		return fmt.Errorf("stage: --digest %q is not sha256:<64 hex digits>", *want)
	}
	fd, err := syscall.Open(*from, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("stage: the compiled definition %s is a symbolic link, not a file", *from)
		}
		return fmt.Errorf("stage: no compiled pipeline definition: %w", &os.PathError{Op: "open", Path: *from, Err: err})
	}
	in := os.NewFile(uintptr(fd), *from)
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("stage: the compiled definition %s is not a regular file (%s)", *from, info.Mode().Type())
	}
	if err := os.MkdirAll(filepath.Dir(*to), 0o755); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if *replace {
		if err := unlink(*to); err != nil {
			return fmt.Errorf("stage: cannot replace what the compile step left at %s: %w", *to, err)
		}
	}
	out, err := createNew(*to, 0o444)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stage: copying %s: %w", *from, err)
	}
	if n == 0 {
		return fmt.Errorf("stage: the compiled definition %s is empty", *from)
	}
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if *want != "" && digest != *want {
		_ = os.Remove(*to)
		return fmt.Errorf("stage: the definition at %s is not the one the compile task sealed: its digest is %s, the compile task reported %s", *from, digest, *want)
	}
	if *digestResult != "" {
		if err := writeFresh(*digestResult, digest); err != nil {
			return fmt.Errorf("stage: writing the digest: %w", err)
		}
	}
	_, err = fmt.Fprintf(log, "kfp-task: staged the pipeline definition at %s: %d bytes, %s\n", *to, n, digest)
	return err
}

// writeFresh writes text to a new file at path, removing whatever was there
// first: tenant steps share the results directory, and a link they left
// there is unlinked, never written through.
func writeFresh(path, text string) error {
	if err := unlink(path); err != nil {
		return err
	}
	f, err := createNew(path, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unlink removes what is at path, if anything: a link itself, never its
// target.
func unlink(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// createNew creates a file that did not exist, never through a link.
func createNew(path string, mode os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
}

// validDigest says whether d is sha256: and 64 lower-case hex digits.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil && strings.ToLower(hexPart) == hexPart
}

func readExitCode(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("exit code file %s holds %q", path, data)
	}
	return code, nil
}

func readOutput(path string) (contract.Output, error) {
	var out contract.Output
	data, err := os.ReadFile(path)
	if err != nil {
		return out, fmt.Errorf("wrote no %s", path)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return contract.Output{}, fmt.Errorf("wrote invalid JSON to %s: %w", path, err)
	}
	return out, nil
}

// escapedLen is the length of s as a JSON string body, as Tekton writes it
// (Go's encoder: HTML-safe escapes, invalid UTF-8 as U+FFFD).
func escapedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}

// truncateEscaped cuts s on a rune boundary so that its JSON-escaped form,
// with a mark saying it was cut, takes at most n bytes.
func truncateEscaped(s string, n int) string {
	if escapedLen(s) <= n {
		return s
	}
	const mark = " …(truncated)"
	budget := n - escapedLen(mark)
	if len(s) > n { // the escaped form is never shorter than the raw bytes
		s = s[:n]
	}
	used, cut := 0, 0
	for i, r := range s {
		w := escapedLen(string(r))
		if r == utf8.RuneError {
			w = 6
		}
		if used+w > budget {
			break
		}
		used += w
		cut = i + len(string(r))
		if r == utf8.RuneError {
			cut = i + 1
		}
	}
	return strings.ToValidUTF8(s[:cut], "") + mark
}

func copySelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o755)
}

// execWithEnv runs a command with the env of a pipeline configuration
// (its "env": [{name, value}] list) added to the step's own environment.
//
//	kfp-task exec --env-from /kfp/pipeline-config.yaml -- COMMAND ARGS...
func execWithEnv(args, environ []string, exec func(string, []string, []string) error) error {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	from := fs.String("env-from", "", "JSON file with an env list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	command := fs.Args()
	if len(command) == 0 {
		return errors.New("exec: no command after --")
	}
	if *from != "" {
		data, err := os.ReadFile(*from)
		if err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		var cfg struct {
			Env []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"env"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("exec: %s: %w", *from, err)
		}
		for _, e := range cfg.Env {
			environ = append(environ, e.Name+"="+e.Value)
		}
	}
	return exec(command[0], command, environ)
}
