package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// FuzzWrite: a param value (plain JSON, or base64 after the prefix) is
// written byte for byte when it decodes to JSON, and refused with an error
// otherwise; nothing is written for a refused value.
func FuzzWrite(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Pipeline"}`, `{not json`, "", "null", `"x"`, contract.EncodeParam([]byte(`{"p":"pa$$word"}`)),
		contract.EncodeParam([]byte(`{`)), "base64:", "base64:!!", "base64:bnVsbA==", contract.EncodeParam([]byte("\xff")),
		`{"a":"\ud800"}`, "[1,2,3] ", "\ufeff{}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		path := filepath.Join(t.TempDir(), "in", "resource.json")
		err := run([]string{"write", "--file", path + "=V"}, func(k string) string {
			if k == "V" {
				return value
			}
			return ""
		})
		want, decodeErr := contract.DecodeParam(value)
		got, readErr := os.ReadFile(path)
		switch {
		case decodeErr != nil || !json.Valid(want):
			if err == nil {
				t.Fatalf("write accepted %q", value)
			}
			if readErr == nil {
				t.Fatalf("write refused %q (%v) but wrote %q", value, err, got)
			}
		case err != nil:
			t.Fatalf("write refused %q: %v", value, err)
		case !bytes.Equal(got, want):
			t.Fatalf("write of %q wrote %q, want %q", value, got, want)
		}
	})
}

// FuzzReport: whatever the provider leaves behind (exit code file, output
// file, either missing), report writes an id and an error that fit the
// results budget escaped, in valid UTF-8, and fails exactly when it reports
// an error.
func FuzzReport(f *testing.F) {
	f.Add(true, "0", true, `{"id":"42"}`, 4096)
	f.Add(true, "1", true, `{"error":"no such pipeline"}`, 4096)
	f.Add(true, "137", false, "", 4096)
	f.Add(true, "0", true, `{"id":`, 4096)
	f.Add(false, "", true, `{"id":"1"}`, 4096)
	f.Add(true, " 0\n", true, `{"id":"`+strings.Repeat("<", 200)+`"}`, 4096)
	f.Add(true, "1", true, `{"error":"`+strings.Repeat(`<&\"\n`, 1000)+`"}`, 4096)
	f.Add(true, "1", true, `{"error":"`+strings.Repeat("é", 3000)+`"}`, 2048)
	f.Add(true, "1", true, "{\"error\":\"\xff\xfe\\ud800\"}", 600)
	f.Add(true, "99999999999999999999", true, `{}`, 4096)
	f.Add(true, "0", true, `{"id":"\u0000","error":""}`, 300)
	f.Fuzz(func(t *testing.T, hasCode bool, code string, hasOutput bool, output string, budget int) {
		// Budgets come from the Task: at least room for the framing and
		// the id (1 KiB escaped), at most the kubelet's 12 KiB.
		if budget < resultsFraming+maxIDEscaped+64 || budget > 12<<10 {
			return
		}
		dir := t.TempDir()
		p := func(n string) string { return filepath.Join(dir, n) }
		if hasCode {
			if err := os.WriteFile(p("exit-code"), []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if hasOutput {
			if err := os.WriteFile(p("output.json"), []byte(output), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := report([]string{"--output", p("output.json"), "--exit-code", p("exit-code"),
			"--id-result", p("id"), "--error-result", p("error"), "--results-budget", itoa(budget)})
		id, idErr := os.ReadFile(p("id"))
		msg, msgErr := os.ReadFile(p("error"))
		if idErr != nil || msgErr != nil {
			t.Fatalf("results not written: %v, %v (report: %v)", idErr, msgErr, err)
		}
		if (err != nil) != (len(msg) > 0) {
			t.Fatalf("report returned %v with error result %q", err, msg)
		}
		if n := escapedLen(string(id)); n > maxIDEscaped {
			t.Fatalf("id of %d escaped bytes", n)
		}
		if n := escapedLen(string(id)) + escapedLen(string(msg)); n > budget-resultsFraming {
			t.Fatalf("results of %d escaped bytes, budget %d", n, budget-resultsFraming)
		}
		if !utf8.Valid(msg) {
			t.Fatalf("error result is not valid UTF-8: %q", msg)
		}
	})
}

// FuzzTruncateEscaped: the result is a prefix of s's valid UTF-8 (plus the
// mark when cut) whose escaped length is within n.
func FuzzTruncateEscaped(f *testing.F) {
	f.Add("short", 100)
	f.Add(strings.Repeat("é", 3000), 3840)
	f.Add(strings.Repeat(`<&"`+"\n", 1000), 3840)
	f.Add("\xff\xfe\xfd"+strings.Repeat("\x80", 100), 50)
	f.Add(strings.Repeat("🚀", 100), 40)
	f.Add("\u2028\u2029 line separators", 20)
	f.Fuzz(func(t *testing.T, s string, n int) {
		const mark = " …(truncated)"
		if n < escapedLen(mark) || n > 1<<20 {
			return // the budget always leaves room for the mark
		}
		got := truncateEscaped(s, n)
		if e := escapedLen(got); e > n {
			t.Fatalf("truncateEscaped(%q, %d) = %q: %d escaped bytes", s, n, got, e)
		}
		if got == s {
			return
		}
		kept, ok := strings.CutSuffix(got, mark)
		if !ok {
			t.Fatalf("truncateEscaped(%q, %d) = %q: changed without the mark", s, n, got)
		}
		if !utf8.ValidString(kept) || !strings.HasPrefix(strings.ToValidUTF8(s, ""), kept) && !strings.HasPrefix(s, kept) {
			t.Fatalf("truncateEscaped(%q, %d) kept %q: not a valid prefix", s, n, kept)
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
