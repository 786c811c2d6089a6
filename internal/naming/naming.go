package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

const (
	// maxNameLength is the longest PipelineRun name Tekton accepts: the name
	// becomes a label value on its TaskRuns and Pods.
	maxNameLength = 63
	// maxGenerateNameLength leaves room for the 5 random characters the API
	// server appends to generateName.
	maxGenerateNameLength = maxNameLength - 5
	hashLength            = 10
)

// Name returns a deterministic DNS-1123 subdomain of at most 63 characters
// (what Tekton accepts as a PipelineRun name): the
// readable parts, sanitised and joined with "-", then a hash of identity.
// Different identities give different names even when their readable parts
// sanitise or truncate to the same text, so a controller can use the name as
// an idempotency key: a retry of the same operation hits AlreadyExists.
func Name(readable []string, identity ...string) string {
	prefix := truncate(sanitize(strings.Join(readable, "-")), maxNameLength-hashLength-1)
	if prefix == "" {
		return "r" + hash(identity)[:hashLength]
	}
	return prefix + "-" + hash(identity)[:hashLength]
}

// GenerateNamePrefix returns a generateName of at most 58 characters ending
// in "-" (the API server appends 5 random characters). See Compact.
func GenerateNamePrefix(parts ...string) string {
	return Compact(maxGenerateNameLength-1, parts...) + "-"
}

// LabelValue returns a label value of at most 63 characters. See Compact.
func LabelValue(parts ...string) string {
	return Compact(maxNameLength, parts...)
}

// Compact joins parts with "-" into a DNS-1123 subdomain (also a valid label
// value) of at most limit
// characters. Parts that are already clean and fit are kept verbatim;
// otherwise a hash of the original parts is appended, so distinct inputs
// never silently share a result. A limit of at most hashLength leaves no
// room for text: the result is the hash alone, cut to limit (so distinct
// inputs may then share one). limit must be at least 1.
func Compact(limit int, parts ...string) string {
	if limit < 1 {
		panic(fmt.Sprintf("naming.Compact: limit %d: a name has at least one character", limit))
	}
	joined := strings.Join(parts, "-")
	clean := sanitize(joined)
	if clean == joined && clean != "" && len(clean) <= limit {
		return clean
	}
	short := hash(parts)[:hashLength]
	if limit <= hashLength {
		return ("r" + short[1:])[:limit]
	}
	clean = truncate(clean, limit-hashLength-1)
	if clean == "" {
		return "r" + short[1:]
	}
	return clean + "-" + short
}

// sanitize lower-cases s and maps every run of characters outside [a-z0-9]
// to a single "-", except a lone "." between alphanumerics, which is kept
// (names are DNS subdomains: "v0.7" stays readable). Ends are trimmed.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var pending []byte // separators since the last alphanumeric
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			if len(pending) > 0 && b.Len() > 0 {
				if len(pending) == 1 && pending[0] == '.' {
					b.WriteByte('.')
				} else {
					b.WriteByte('-')
				}
			}
			pending = pending[:0]
			b.WriteByte(c)
			continue
		}
		pending = append(pending, c)
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-.")
}

// hash is a hex SHA-256 over the parts, each terminated so ("ab","c") and
// ("a","bc") differ.
func hash(parts []string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
