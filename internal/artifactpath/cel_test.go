package artifactpath_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/artifactpath"
)

// The API server checks an artifact path's form with the CEL rules on
// OutputArtifact.Path; Parse checks it too, and compiles the filter. They
// must agree: the API server admits exactly the paths Parse accepts, or
// refuses with a *FilterError only (a FILTER go-bexpr cannot compile,
// which kfp-operator admits too).

var pathCorpus = []string{
	// kfp-operator's forms.
	"train:model:0", "CsvExampleGen:examples", "train:model:", "train:model:007", "Pusher:pushed_model:0[pushed == 1]",
	"Pusher:pushed_model[pushed == 1]", "Pusher:pushed_model:[pushed == 1]", "a b:c-d.e/f:3[(x == 1)]", "ż:ó:12",
	"t:o:9223372036854775807", "t:o:0009223372036854775807", "t:o:999999999999999999", "t:o:1000000000000000000",
	"t:o:9223372036854775799", "t:o:9223372036854775800[x == 1]", "t:o:9199999999999999999", "t:o:8999999999999999999",
	`train:model:12[accuracy == 0.9 and stage == prod and (name != "a b" or pushed == true)]`,
	"t:o[(any tags as t { t == eu })]", "t:o[\"/labels/team\" == ml]", "t:o[stage matches \"^pr.*\"]", "t:o[x is not empty]",
	"t:o:0[x == `raw`]", "t:o[((((((x == 1))))))]", "t\n:o\t[x\n==\n1]",
	// Filters kfp-operator admits but go-bexpr cannot compile.
	"train:model:0[pushed = 1]", "train:model:0[stage < 'x']", "train:model:0[a == 'x]", "t:o[x == 1 && y == 2]",
	"t:o[x >= 0.5]", "t:o[x == 01]", "t:o[(x == 1]", `t:o[x == "\q"]`, "t:o[(((((((x == 1)))))))]", "t:o[ł == 1]",
	"t:o[any l as v { v == 1 } and x == 1]", "t:o[ ]", "t:o[x]",
	// What kfp-operator refuses.
	"train", "train[x == 1]", "a:b:c:0", ":model:0", "train::0", "train:model:x", "train:model:-1", "train:model:+1",
	"t:o:9223372036854775808", "t:o:9300000000000000000", "t:o:10000000000000000000", "t:o:99999999999999999999[x == 1]",
	"train:model:0[]", "train:model:0[x == 1", "train:model:0[x == 1]x", "train:model:0[[x]]", "train:model:0[x == a:b]",
	"train:model]", "t:o:0[x][y]", "t:o:1 ", " t:o[x == 1] ", "t:o:1:", "t[x]:o",
}

func TestCELRulesAgreeWithParse(t *testing.T) {
	for _, crd := range []string{"runs", "runconfigurations", "runschedules"} {
		t.Run(crd, func(t *testing.T) {
			path := pathSchema(t, crd)
			validator := cel.NewValidator(path, false, celconfig.PerCallLimit)
			require.NotNil(t, validator, "the path has no x-kubernetes-validations")
			admitted := func(p string) (bool, string) {
				if v := path.ValueValidation; v != nil && (v.MinLength != nil && int64(len(p)) < *v.MinLength || v.MaxLength != nil && int64(len(p)) > *v.MaxLength) {
					return false, "length"
				}
				errs, _ := validator.Validate(context.Background(), field.NewPath("path"), path, p, nil, celconfig.RuntimeCELCostBudget)
				if len(errs) > 0 {
					return false, errs.ToAggregate().Error()
				}
				return true, ""
			}
			var accepted, filterErrors, refused int
			for _, p := range pathCorpus {
				ok, why := admitted(p)
				_, err := artifactpath.Parse(p)
				var fe *artifactpath.FilterError
				switch {
				case err == nil:
					accepted++
					assert.True(t, ok, "%q: Parse accepts it, the API server refuses it: %s", p, why)
				case errors.As(err, &fe):
					filterErrors++
					assert.True(t, ok, "%q: kfp-operator admits it (%v), the API server refuses it: %s", p, err, why)
				default:
					refused++
					assert.False(t, ok, "%q: Parse refuses it (%v), the API server admits it", p, err)
					if !ok && why != "length" {
						assert.NotContains(t, why, "rule evaluation error", p)
					}
				}
			}
			// The corpus covers each outcome.
			assert.Greater(t, accepted, 10)
			assert.Greater(t, filterErrors, 10)
			assert.Greater(t, refused, 10)
		})
	}
}

// pathSchema is the structural schema of OutputArtifact.Path in a CRD of
// config/crd/bases, checked to carry the rules runspec_types.go declares.
func pathSchema(t *testing.T, plural string) *schema.Structural {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "pipelines.kubeflow.org_"+plural+".yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, crd))
	var found *schema.Structural
	for _, v := range crd.Spec.Versions {
		if v.Name != "v1beta1" {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil))
		s, err := schema.NewStructural(internal)
		require.NoError(t, err)
		found = findPath(s)
	}
	require.NotNil(t, found, "%s: no artifacts[].path in v1beta1", plural)
	var inCRD []string
	for _, r := range found.XValidations {
		inCRD = append(inCRD, r.Rule)
	}
	require.Equal(t, markerRules(t), inCRD, "config/crd/bases is stale: run make generate manifests")
	return found
}

// findPath finds the schema of an artifacts[] item's path.
func findPath(s *schema.Structural) *schema.Structural {
	if a, ok := s.Properties["artifacts"]; ok && a.Items != nil {
		if p, ok := a.Items.Properties["path"]; ok {
			if _, hasName := a.Items.Properties["name"]; hasName {
				return &p
			}
		}
	}
	for _, p := range s.Properties {
		if f := findPath(&p); f != nil {
			return f
		}
	}
	if s.Items != nil {
		return findPath(s.Items)
	}
	return nil
}

// markerRules are the XValidation rules api/v1beta1 declares on
// OutputArtifact.Path.
func markerRules(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "api", "v1beta1", "runspec_types.go"))
	require.NoError(t, err)
	_, afterType, ok := strings.Cut(string(src), "type OutputArtifact struct {")
	require.True(t, ok)
	decl, _, ok := strings.Cut(afterType, "Path string `json:\"path\"`")
	require.True(t, ok)
	var rules []string
	for _, m := range regexp.MustCompile("(?m)^\\s*// \\+kubebuilder:validation:XValidation:rule=`([^`]*)`").FindAllStringSubmatch(decl, -1) {
		rules = append(rules, m[1])
	}
	require.NotEmpty(t, rules)
	return rules
}
