package provider

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPodSecurityProblem(t *testing.T) {
	cases := map[string]struct {
		enforce    string
		flags      map[string]string
		flagsFound bool
		want       string // substring; "" = no problem
	}{
		"restricted, flag on":               {"restricted", map[string]string{"set-security-context": "true"}, true, ""},
		"restricted, flag off":              {"restricted", map[string]string{"set-security-context": "false"}, true, `set-security-context is false in ConfigMap tekton-pipelines/feature-flags`},
		"restricted, flag unset":            {"restricted", map[string]string{}, true, "is unset (false)"},
		"restricted, flags unreadable":      {"restricted", nil, false, ""},
		"baseline, flag off":                {"baseline", map[string]string{"set-security-context": "false"}, true, ""},
		"not enforced, flag off":            {"", map[string]string{"set-security-context": "false"}, true, ""},
		"restricted, flag TRUE (ParseBool)": {"restricted", map[string]string{"set-security-context": "TRUE"}, true, ""},
		"restricted, flag misspelt":         {"restricted", map[string]string{"set-security-context": "yes"}, true, "is yes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := podSecurityProblem(tc.enforce, tc.flags, tc.flagsFound, "team-a", "tekton-pipelines")
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
			assert.Contains(t, got, "namespace team-a enforces Pod Security \"restricted\"")
		})
	}
}

func TestMarksProvider(t *testing.T) {
	cases := map[string]bool{
		"team-a/kfp":              true,
		"team-b/kfp, team-a/kfp":  true,
		" team-a/kfp ":            true,
		"team-a/kfp2":             false,
		"team-a/kf":               false,
		"*":                       false, // no wildcard: each Provider is named
		"":                        false,
		"team-a/kfp/extra":        false,
		"team-b/kfp,team-a/kfp-x": false,
	}
	for annotation, want := range cases {
		assert.Equal(t, want, marksProvider(annotation, "team-a/kfp"), "%q", annotation)
	}
}
