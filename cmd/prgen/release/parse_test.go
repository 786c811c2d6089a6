package release

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const validMatrix = `namespace: ci
manifestsRepo: https://example.com/manifests.git
applications:
  - name: operator
    repo: https://example.com/app.git
    image: ghcr.io/org/operator
    manifests: config
  - name: prgen
    repo: https://example.com/app.git
    image: ghcr.io/org/prgen
    manifests: config
versions:
  - name: main
    revision: main
    manifestsBranch: main
`

func TestParseValidMatrix(t *testing.T) {
	m, err := Parse("m.yaml", []byte(validMatrix))
	require.NoError(t, err)
	assert.Equal(t, "ci", m.Namespace)
	require.Len(t, m.Applications, 2)
	assert.Equal(t, "ghcr.io/org/prgen", m.Applications[1].Image)
	assert.Equal(t, "main", m.Versions[0].ManifestsBranch)
}

func TestParseKeepsADollarThatIsNoVariable(t *testing.T) {
	m, err := Parse("m.yaml", []byte(strings.Replace(validMatrix, "    revision: main", "    revision: cost-$5", 1)))
	require.NoError(t, err)
	assert.Equal(t, "cost-$5", m.Versions[0].Revision)
}

func TestParseErrorsNameFileLineAndField(t *testing.T) {
	cases := map[string]struct {
		matrix string
		want   []string
	}{
		"unknown field": {
			strings.Replace(validMatrix, "    image: ghcr.io/org/prgen", "    imag: ghcr.io/org/prgen", 1),
			[]string{"m.yaml:10: applications[1].imag: unknown field", "m.yaml:8: applications[1].image: is required"},
		},
		"unknown top-level field": {
			"colour: blue\n" + validMatrix,
			[]string{"m.yaml:1: colour: unknown field (known: namespace, serviceAccount, manifestsRepo"},
		},
		"missing field": {
			strings.Replace(validMatrix, "    revision: main\n", "", 1),
			[]string{"m.yaml:13: versions[0].revision: is required"},
		},
		"missing manifests repo": {
			strings.Replace(validMatrix, "manifestsRepo: https://example.com/manifests.git\n", "", 1),
			[]string{"m.yaml:1: manifestsRepo: is required"},
		},
		"duplicate application": {
			strings.Replace(validMatrix, "name: prgen", "name: operator", 1),
			[]string{`m.yaml:8: applications[1].name: duplicate application "operator" (first at line 4)`},
		},
		"wrong kind of value": {
			strings.Replace(validMatrix, "    image: ghcr.io/org/operator", "    image: [a, b]", 1),
			[]string{"m.yaml:6: applications[0].image: must be a string"},
		},
		"list expected": {
			strings.Replace(validMatrix, "versions:\n  - name: main\n    revision: main\n    manifestsBranch: main\n", "versions: main\n", 1),
			[]string{"m.yaml:12: versions: must be a list"},
		},
		"image with tag": {
			strings.Replace(validMatrix, "ghcr.io/org/operator", "ghcr.io/org/operator:v1", 1),
			[]string{"m.yaml:6: applications[0].image: must be an image repository without tag"},
		},
		"version not a tag": {
			strings.Replace(validMatrix, "  - name: main", "  - name: release/1", 1),
			[]string{"m.yaml:13: versions[0].name: must be usable as a label value and image tag"},
		},
		"syntax error": {
			validMatrix + "  - name: [unclosed\n",
			[]string{"m.yaml:15: did not find expected"},
		},
		"empty": {"", []string{"m.yaml:1: the matrix is empty"}},
		"a variable Tekton would expand": {
			strings.Replace(validMatrix, "    revision: main", "    revision: $(context.pipelineRun.name)", 1),
			[]string{`m.yaml:14: versions[0].revision: must not contain "$(": Tekton would expand it`},
		},
		"a result reference in a tool image": {
			validMatrix + "tools:\n  git: $(tasks.x.results.y)\n",
			[]string{`m.yaml:17: tools.git: must not contain "$("`},
		},
		"service account that cannot exist": {
			"serviceAccount: Release_Bot\n" + validMatrix,
			[]string{"m.yaml:1: serviceAccount: must be a Kubernetes object name: a lowercase RFC 1123 subdomain"},
		},
		"secret that cannot exist": {
			"credentials:\n  registry: -creds\n" + validMatrix,
			[]string{"m.yaml:2: credentials.registry: must be a Kubernetes object name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(tc.matrix))
			require.Error(t, err)
			assert.Nil(t, m)
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
