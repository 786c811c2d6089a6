package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) string { return "" }

// roundTrip runs generate, train and evaluate as the IR's defaults do and
// returns the accuracy result and train's log.
func roundTrip(t *testing.T, dir string, getenv func(string) string) (accuracy float64, trainLog string) {
	t.Helper()
	dataset := filepath.Join(dir, "run", "generate", "dataset") // parents are created
	modelPath := filepath.Join(dir, "run", "train", "model")
	var out bytes.Buffer
	require.NoError(t, run([]string{"generate", "--rows", "200", "--dataset", dataset, "--row-count", filepath.Join(dir, "row_count")}, &out, getenv))
	rowCount, err := os.ReadFile(filepath.Join(dir, "row_count"))
	require.NoError(t, err)
	assert.Equal(t, "200", string(rowCount), "the result file holds the bare number")

	out.Reset()
	require.NoError(t, run([]string{"train", "--dataset", dataset, "--rows=" + string(rowCount), "--learning-rate=0.1", "--epochs=5",
		"--model", modelPath, "--model-uri", "file:///kfp/artifacts/run/train/model"}, &out, getenv))
	trainLog = out.String()

	out.Reset()
	accPath := filepath.Join(dir, "accuracy")
	require.NoError(t, run([]string{"evaluate", "--dataset", dataset, "--model", modelPath, "--accuracy", accPath}, &out, getenv))
	got, err := os.ReadFile(accPath)
	require.NoError(t, err)
	accuracy, err = strconv.ParseFloat(string(got), 64)
	require.NoError(t, err, "the accuracy result is a bare number: %q", got)
	assert.Equal(t, "accuracy "+strconv.FormatFloat(accuracy, 'f', 4, 64)+"\n", out.String())
	assert.Equal(t, strconv.FormatFloat(accuracy, 'f', -1, 64), string(got), "shortest form")
	return accuracy, trainLog
}

func TestRoundTripWithTheIRDefaults(t *testing.T) {
	acc, log := roundTrip(t, t.TempDir(), noEnv)
	assert.Greater(t, acc, 0.7)
	assert.LessOrEqual(t, acc, 1.0)

	lines := strings.Split(strings.TrimSpace(log), "\n")
	var losses []float64
	for _, l := range lines {
		var epoch, of int
		var loss float64
		if n, _ := fmt.Sscanf(l, "epoch %d/%d loss %f", &epoch, &of, &loss); n == 3 {
			assert.Equal(t, len(losses)+1, epoch)
			assert.Equal(t, 5, of)
			losses = append(losses, loss)
		}
	}
	require.Len(t, losses, 5, "one loss line per epoch:\n%s", log)
	assert.Less(t, losses[4], losses[0], "training lowers the loss")
	assert.Equal(t, "model written to file:///kfp/artifacts/run/train/model", lines[len(lines)-1])
	assert.NotContains(t, log, "weights", "weights are logged at debug only")

	_, debugLog := roundTrip(t, t.TempDir(), func(k string) string {
		if k == "DEMO_LOG_LEVEL" {
			return "debug"
		}
		return ""
	})
	assert.Contains(t, debugLog, "weights")
}

func TestDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	accA, logA := roundTrip(t, a, noEnv)
	accB, logB := roundTrip(t, b, noEnv)
	assert.Equal(t, accA, accB)
	assert.Equal(t, logA, logB)
	for _, f := range []string{"run/generate/dataset", "run/train/model"} {
		da, err := os.ReadFile(filepath.Join(a, f))
		require.NoError(t, err)
		db, err := os.ReadFile(filepath.Join(b, f))
		require.NoError(t, err)
		assert.Equal(t, da, db, "%s is the same in every run", f)
	}
	data, err := os.ReadFile(filepath.Join(a, "run/generate/dataset"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "x1,x2,label\n"))
	assert.Equal(t, 201, strings.Count(string(data), "\n"), "a header and 200 rows")
	assert.NotContains(t, string(data), "-0.0000")
	// Both classes occur, or accuracy would say little.
	assert.Contains(t, string(data), ",0\n")
	assert.Contains(t, string(data), ",1\n")
}

func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	dataset := filepath.Join(dir, "dataset")
	require.NoError(t, run([]string{"generate", "--rows", "50", "--dataset", dataset, "--row-count", filepath.Join(dir, "n")}, &bytes.Buffer{}, noEnv))
	modelPath := filepath.Join(dir, "model")
	require.NoError(t, run([]string{"train", "--dataset", dataset, "--rows", "50", "--learning-rate", "0.1", "--epochs", "1",
		"--model", modelPath, "--model-uri", "file:///m"}, &bytes.Buffer{}, noEnv))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	train := func(ds, rows, lr, epochs string) []string {
		return []string{"train", "--dataset", ds, "--rows", rows, "--learning-rate", lr, "--epochs", epochs,
			"--model", filepath.Join(dir, "out", "model"), "--model-uri", "file:///m"}
	}
	generate := func(rows string) []string {
		return []string{"generate", "--rows", rows, "--dataset", filepath.Join(dir, "g", "ds"), "--row-count", filepath.Join(dir, "g", "n")}
	}
	evaluate := func(ds, m string) []string {
		return []string{"evaluate", "--dataset", ds, "--model", m, "--accuracy", filepath.Join(dir, "out", "acc")}
	}
	cases := map[string]struct {
		args []string
		env  string // DEMO_LOG_LEVEL
		want string
	}{
		"no command":            {nil, "", "usage"},
		"unknown command":       {[]string{"predict"}, "", `unknown command "predict"`},
		"too few rows":          {generate("9"), "", "--rows 9 is out of range: want 10 to 1000000"},
		"too many rows":         {generate("1000001"), "", "--rows 1000001 is out of range"},
		"rows not a number":     {generate("many"), "", `--rows "many" is not a whole number`},
		"rows with a fraction":  {generate("200.0"), "", "is not a whole number"},
		"rows hexadecimal":      {generate("0x20"), "", "is not a whole number"},
		"missing flag":          {[]string{"generate", "--rows", "20", "--dataset", dataset}, "", "--row-count is required"},
		"unknown flag":          {[]string{"generate", "--rowz", "20"}, "", "flag provided but not defined: -rowz"},
		"positional argument":   {append(generate("20"), "extra"), "", `unexpected argument "extra"`},
		"row count mismatch":    {train(dataset, "200", "0.1", "5"), "", "has 50 rows, but --rows says 200"},
		"dataset missing":       {train(filepath.Join(dir, "nope"), "50", "0.1", "5"), "", "reading the dataset"},
		"learning rate zero":    {train(dataset, "50", "0", "5"), "", `--learning-rate "0"`},
		"learning rate NaN":     {train(dataset, "50", "NaN", "5"), "", `--learning-rate "NaN"`},
		"learning rate huge":    {train(dataset, "50", "1e9", "5"), "", `--learning-rate "1e9"`},
		"learning rate text":    {train(dataset, "50", "fast", "5"), "", `--learning-rate "fast"`},
		"zero epochs":           {train(dataset, "50", "0.1", "0"), "", "--epochs 0 is out of range"},
		"bad log level":         {train(dataset, "50", "0.1", "5"), "verbose", `DEMO_LOG_LEVEL "verbose"`},
		"empty dataset":         {train(write("empty", ""), "50", "0.1", "5"), "", "is empty"},
		"header only":           {train(write("header", "x1,x2,label\n"), "50", "0.1", "5"), "", "has no rows"},
		"wrong header":          {train(write("hdr", "a,b,c\n1,2,0\n"), "50", "0.1", "5"), "", "want the header"},
		"bad label":             {train(write("label", "x1,x2,label\n0.1,0.2,0\n0.1,0.2,2\n"), "50", "0.1", "5"), "", `line 3: label "2" is not 0 or 1`},
		"bad feature":           {train(write("feat", "x1,x2,label\n0.1,Inf,0\n"), "50", "0.1", "5"), "", `line 2: x2 "Inf" is not a finite number`},
		"wrong field count":     {train(write("fields", "x1,x2,label\n0.1,0\n"), "50", "0.1", "5"), "", "wrong number of fields"},
		"model missing":         {evaluate(dataset, filepath.Join(dir, "nope")), "", "reading the model"},
		"model not JSON":        {evaluate(dataset, write("m1", "weights")), "", "is not JSON"},
		"model of another kind": {evaluate(dataset, write("m2", `{"kind":"tree","features":["x1","x2"],"weights":[1,2]}`)), "", "is not a kfp-demo/logistic-regression"},
		"model weights short":   {evaluate(dataset, write("m3", `{"kind":"kfp-demo/logistic-regression","features":["x1","x2"],"weights":[1]}`)), "", "two finite weights"},
		"fail without message":  {[]string{"fail"}, "", "--message is required"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(tc.args, &bytes.Buffer{}, func(k string) string {
				if k == "DEMO_LOG_LEVEL" {
					return tc.env
				}
				return ""
			})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.NoFileExists(t, filepath.Join(dir, "g", "n"), "a refused generate writes nothing")
	assert.NoFileExists(t, filepath.Join(dir, "out", "model"), "a refused train writes no model")
	assert.NoFileExists(t, filepath.Join(dir, "out", "acc"), "a refused evaluate writes no result")
}

func TestFailIsTheMessage(t *testing.T) {
	err := run([]string{"fail", "--message", "step failed on purpose"}, &bytes.Buffer{}, noEnv)
	var f failure
	require.True(t, errors.As(err, &f))
	assert.Equal(t, "step failed on purpose", string(f))
}

// TestMainExitCodeAndStderr runs the test binary as the command itself, to see
// the exit code and stderr a task would.
func TestMainExitCodeAndStderr(t *testing.T) {
	if args := os.Getenv("KFP_DEMO_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"kfp-demo"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"fail", "--message", "broken on purpose"}, 1, "broken on purpose\n"},
		{[]string{"generate", "--rows", "5", "--dataset", "/x", "--row-count", "/y"}, 1, "kfp-demo: generate: --rows 5 is out of range: want 10 to 1000000\n"},
		{[]string{"generate", "--rows", "10", "--dataset", filepath.Join(t.TempDir(), "d"), "--row-count", filepath.Join(t.TempDir(), "n")}, 0, ""},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitCodeAndStderr$")
		cmd.Env = append(os.Environ(), "KFP_DEMO_MAIN_ARGS="+strings.Join(tc.args, "\x1f"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, tc.code, code, "%v", tc.args)
		assert.Equal(t, tc.wantStderr, stderr.String(), "%v", tc.args)
	}
}
