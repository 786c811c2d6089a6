// Package yamlenc writes JSON-shaped trees (map[string]any, []any, string,
// json.Number, float64, bool, nil: what encoding/json decodes) as block-style
// YAML, an order of magnitude faster than a round trip through a YAML
// library. Keys are sorted, so output is deterministic. A string is written
// plain only when no YAML 1.1 or 1.2 reader could take it for anything but
// that string; otherwise it is double-quoted with JSON-compatible escapes.
package yamlenc

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Fragment marks a subtree that repeats across documents: the Encoder
// renders it once per indentation and copies the bytes afterwards. Reuse the
// same *Fragment only for the same, unchanged Value.
type Fragment struct{ Value any }

// Encoder appends YAML documents to a buffer. The zero value is ready; it is
// not safe for concurrent use.
type Encoder struct {
	// LeaveFragments makes the Encoder leave a Fragment's bytes out of the
	// buffer and record where they belong instead (TakeSplices). A caller
	// that writes documents out then copies a repeated subtree straight
	// from the one rendering, rather than holding a copy per document: most
	// of a release's bytes are its shared pipelineSpec.
	LeaveFragments bool

	fragments map[fragmentKey][]byte
	splices   []Splice
}

// A Splice is a Fragment's bytes, which belong at offset At of the buffer
// the Encoder appended to (before what was appended at At). Bytes is the
// Encoder's own rendering: read it, never modify it.
type Splice struct {
	At    int
	Bytes []byte
}

// TakeSplices returns the splices recorded since it was last called, in
// buffer order, and forgets them.
func (e *Encoder) TakeSplices() []Splice {
	s := e.splices
	e.splices = nil
	return s
}

// WriteSpliced writes buf with splices (in buffer order) put back in place.
func WriteSpliced(w io.Writer, buf []byte, splices []Splice) error {
	from := 0
	for _, s := range splices {
		if _, err := w.Write(buf[from:s.At]); err != nil {
			return err
		}
		if _, err := w.Write(s.Bytes); err != nil {
			return err
		}
		from = s.At
	}
	_, err := w.Write(buf[from:])
	return err
}

type fragmentKey struct {
	f      *Fragment
	indent int
	inline bool // first line continues a "- " already written
}

// AppendDocument appends "---", a newline and v as a YAML document.
func (e *Encoder) AppendDocument(dst []byte, v any) ([]byte, error) {
	dst = append(dst, "---\n"...)
	switch v.(type) {
	case map[string]any, []any, *Fragment:
		return e.appendBlock(dst, v, 0)
	default:
		dst, err := appendScalar(dst, v)
		return append(dst, '\n'), err
	}
}

// AppendBlock appends v, a map, list or Fragment, as a block whose lines
// start at indent: what follows "key:\n" for a map under a key at
// indent-2, or for a list under a key at indent. For callers that write the
// fixed part of a document themselves.
func (e *Encoder) AppendBlock(dst []byte, v any, indent int) ([]byte, error) {
	return e.appendBlock(dst, v, indent)
}

// AppendString appends s as a YAML scalar that reads back as the string s:
// plain where that is unambiguous, double-quoted otherwise.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// appendBlock writes a map or list whose lines start at indent.
func (e *Encoder) appendBlock(dst []byte, v any, indent int) ([]byte, error) {
	switch v := v.(type) {
	case *Fragment:
		key := fragmentKey{v, indent, inlineFirst(dst)}
		cached, ok := e.fragments[key]
		if !ok {
			start := len(dst)
			var err error
			if dst, err = e.appendBlock(dst, v.Value, indent); err != nil {
				return dst, err
			}
			if e.fragments == nil {
				e.fragments = map[fragmentKey][]byte{}
			}
			cached = slices.Clone(dst[start:])
			e.fragments[key] = cached
			dst = dst[:start]
		}
		// A fragment's bytes end with a newline, as the bytes before it do,
		// so nothing written after it depends on which are in dst.
		if e.LeaveFragments {
			e.splices = append(e.splices, Splice{At: len(dst), Bytes: cached})
			return dst, nil
		}
		return append(dst, cached...), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 || !inlineFirst(dst) {
				dst = appendIndent(dst, indent)
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = e.appendValue(dst, v[k], indent, false); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case []any:
		for i, item := range v {
			if i > 0 || !inlineFirst(dst) {
				dst = appendIndent(dst, indent)
			}
			dst = append(dst, '-')
			var err error
			if dst, err = e.appendValue(dst, item, indent, true); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("yamlenc: %T is not a map or list", v)
}

// inlineFirst reports whether the next entry continues the current line,
// as the first entry of a list item does ("- name: x").
func inlineFirst(dst []byte) bool {
	return len(dst) >= 2 && dst[len(dst)-2] == '-' && dst[len(dst)-1] == ' '
}

// appendValue writes what follows "key:" or "-": a scalar on the same line,
// or a nested block. Nested maps go two spaces deeper; a list under a key
// stays at the key's indentation (the usual Kubernetes style); anything
// under a list item starts on the item's line.
func (e *Encoder) appendValue(dst []byte, v any, indent int, listItem bool) ([]byte, error) {
	if f, ok := v.(*Fragment); ok {
		if empty(f.Value) {
			return e.appendValue(dst, f.Value, indent, listItem)
		}
	}
	switch x := v.(type) {
	case map[string]any, []any, *Fragment:
		if empty(x) {
			if _, isMap := x.(map[string]any); isMap {
				return append(dst, " {}\n"...), nil
			}
			return append(dst, " []\n"...), nil
		}
		if listItem {
			dst = append(dst, ' ')
			return e.appendBlock(dst, x, indent+2)
		}
		dst = append(dst, '\n')
		inner := indent + 2
		if isList(x) {
			inner = indent
		}
		return e.appendBlock(dst, x, inner)
	default:
		dst = append(dst, ' ')
		dst, err := appendScalar(dst, v)
		return append(dst, '\n'), err
	}
}

func isList(v any) bool {
	if f, ok := v.(*Fragment); ok {
		v = f.Value
	}
	_, ok := v.([]any)
	return ok
}

func empty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case *Fragment:
		return empty(x.Value)
	}
	return false
}

func appendIndent(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, ' ')
	}
	return dst
}

func appendScalar(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case json.Number:
		return append(dst, x...), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return dst, fmt.Errorf("yamlenc: %v has no JSON form", x)
		}
		return strconv.AppendFloat(dst, x, 'g', -1, 64), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	}
	return dst, fmt.Errorf("yamlenc: cannot encode %T", v)
}

func appendString(dst []byte, s string) []byte {
	if plainSafe(s) {
		return append(dst, s...)
	}
	// Go's escapes (\n \t \\ \" \xNN \uNNNN \UNNNNNNNN) are all YAML escapes.
	return strconv.AppendQuote(dst, s)
}

// plainSafe is deliberately conservative: letters and digits, a few
// punctuation characters that are no indicator where they stand, no ": " or
// " #", and nothing a YAML 1.1 reader (kubectl's) resolves to a bool, null,
// number or timestamp.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '/', c == '$', c == '(', c == '_':
	default:
		// Digits, signs and dots start numbers, dates and .inf; the rest are
		// indicators.
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == '/', c == '$', c == '(', c == ')', c == '=', c == '+', c == '@', c == '~', c == '%', c == ',':
		case c == ':':
			if i+1 < len(s) && s[i+1] == ' ' {
				return false
			}
		case c == ' ':
			if i+1 < len(s) && (s[i+1] == '#' || s[i+1] == ' ') {
				return false
			}
		default:
			return false
		}
	}
	return !special[strings.ToLower(s)]
}

// special are the words YAML 1.1 or 1.2 reads as bool or null (any case).
var special = map[string]bool{
	"y": true, "yes": true, "n": true, "no": true, "true": true, "false": true,
	"on": true, "off": true, "null": true,
}
