package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNameIsAValidLabelAndDeterministic(t *testing.T) {
	long := strings.Repeat("very-long-resource-name", 10)
	cases := [][]string{
		{"pipeline", "team-a", "penguin", "create"},
		{"Pipeline", "Team_A", "Penguin!", "create"},
		{long, long},
		{"", ""},
		{"---", "___"},
		{"a.-b", "..c."},
	}
	for _, readable := range cases {
		name := Name(readable, "uid-1", "gen-2")
		assert.Empty(t, validation.IsDNS1123Subdomain(name), "%q from %q", name, readable)
		assert.LessOrEqual(t, len(name), 63)
		assert.Equal(t, name, Name(readable, "uid-1", "gen-2"), "same input, same name")
	}
}

func TestNameDiffersWithIdentity(t *testing.T) {
	readable := []string{"pipeline", "penguin", "create"}
	assert.NotEqual(t, Name(readable, "uid-1", "1"), Name(readable, "uid-1", "2"))
	assert.NotEqual(t, Name(readable, "ab", "c"), Name(readable, "a", "bc"), "parts are delimited before hashing")
	assert.True(t, strings.HasPrefix(Name(readable, "x"), "pipeline-penguin-create-"))
}

func TestGenerateNamePrefix(t *testing.T) {
	assert.Equal(t, "operator-main-", GenerateNamePrefix("operator", "main"), "clean input is kept verbatim")
	assert.Equal(t, "operator-v0.1-", GenerateNamePrefix("operator", "v0.1"), "a lone dot is kept")
	dotted := GenerateNamePrefix("operator", "release/0.1")
	assert.True(t, strings.HasPrefix(dotted, "operator-release-0.1-"), dotted)
	assert.NotEqual(t, dotted, GenerateNamePrefix("operator", "release-0.1"), "inputs that sanitise alike stay distinct")

	long := GenerateNamePrefix(strings.Repeat("a", 40), strings.Repeat("b", 40))
	assert.LessOrEqual(t, len(long), 58, "the API server appends 5 characters to reach 63")
	assert.True(t, strings.HasSuffix(long, "-"))
	assert.NotEqual(t, long, GenerateNamePrefix(strings.Repeat("a", 40), strings.Repeat("b", 41)))
	for _, p := range []string{dotted, long, GenerateNamePrefix("", "")} {
		assert.Empty(t, validation.IsDNS1123Subdomain(p+"abcde"), p)
	}
}

func TestLabelValue(t *testing.T) {
	assert.Equal(t, "operator-main", LabelValue("operator", "main"))
	v := LabelValue(strings.Repeat("x", 63), "main")
	assert.LessOrEqual(t, len(v), 63)
	assert.Empty(t, validation.IsValidLabelValue(v))
}
