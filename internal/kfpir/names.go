package kfpir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// A nameRule is one of Tekton's naming rules.
type nameRule struct {
	kind     string
	valid    *regexp.Regexp
	maxLen   int
	lower    bool
	allowed  func(r rune) bool
	startsOK func(r rune) bool
	prefix   string // prepended when the sanitised name cannot start as it is
}

var (
	// taskNames: PipelineTask names are DNS-1123 labels.
	taskNames = nameRule{
		kind:     "task",
		valid:    regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`),
		maxLen:   63,
		lower:    true,
		allowed:  func(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' },
		startsOK: func(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' },
		prefix:   "t",
	}
	// paramNames: Tekton's param rule without dots (a dotted name would
	// need the $(params["a.b"]) form).
	paramNames = nameRule{
		kind:     "param",
		valid:    regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]*$`),
		maxLen:   128,
		allowed:  func(r rune) bool { return isAlnum(r) || r == '_' || r == '-' },
		startsOK: func(r rune) bool { return isAlpha(r) || r == '_' },
		prefix:   "p",
	}
	// resultNames: Tekton's result rule without dots; also used for the
	// directory names of artifacts.
	resultNames = nameRule{
		kind:     "result",
		valid:    regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?$`),
		maxLen:   128,
		allowed:  func(r rune) bool { return isAlnum(r) || r == '_' || r == '-' },
		startsOK: isAlnum,
		prefix:   "r",
	}
)

func isAlpha(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isAlnum(r rune) bool { return isAlpha(r) || r >= '0' && r <= '9' }

// assign maps each original name to a Tekton name under rule. A name that
// already obeys the rule is kept; any other becomes its sanitised form plus
// "-" and 8 hex digits of the SHA-256 of the original, so the mapping does
// not depend on which other names exist and two originals never share a
// sanitised name. A clash that is left (an original that happens to equal
// another's hashed form) is an error.
func (rule nameRule) assign(originals []string) (map[string]string, error) {
	out := make(map[string]string, len(originals))
	owner := make(map[string]string, len(originals))
	for _, orig := range originals {
		name := rule.sanitise(orig)
		if prev, taken := owner[name]; taken && prev != orig {
			return nil, fmt.Errorf("%s names %q and %q both become %q", rule.kind, prev, orig, name)
		}
		owner[name] = orig
		out[orig] = name
	}
	return out, nil
}

func (rule nameRule) sanitise(orig string) string {
	if len(orig) <= rule.maxLen && rule.valid.MatchString(orig) {
		return orig
	}
	sum := sha256.Sum256([]byte(orig))
	suffix := "-" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for _, r := range orig {
		if rule.lower {
			r = []rune(strings.ToLower(string(r)))[0]
		}
		if rule.allowed(r) {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	for strings.Contains(base, "--") && rule.lower {
		base = strings.ReplaceAll(base, "--", "-")
	}
	if base == "" || !rule.startsOK([]rune(base)[0]) {
		base = rule.prefix + base
	}
	if limit := rule.maxLen - len(suffix); len(base) > limit {
		base = strings.TrimRight(base[:limit], "-_")
	}
	return base + suffix
}

// ParamName is the Tekton param that Compile declares for the root input
// parameter named kfp; a PipelineRun passes the parameter's value under it.
func ParamName(kfp string) string { return paramNames.sanitise(kfp) }
