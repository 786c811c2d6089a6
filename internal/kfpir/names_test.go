package kfpir

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSanitise(t *testing.T) {
	long := strings.Repeat("very-long-task-name-", 5)
	cases := []struct {
		rule      nameRule
		in, want  string
		unchanged bool
	}{
		{rule: taskNames, in: "train", unchanged: true},
		{rule: taskNames, in: "train-2", unchanged: true},
		{rule: taskNames, in: "Train Model", want: "train-model-"},
		{rule: taskNames, in: "-x-", want: "x-"},
		{rule: taskNames, in: "___", want: "t-"},
		{rule: taskNames, in: long, want: long[:54]},
		{rule: paramNames, in: "learning_rate", unchanged: true},
		{rule: paramNames, in: "pipelinechannel--text", unchanged: true},
		{rule: paramNames, in: "_x", unchanged: true},
		{rule: paramNames, in: "learning.rate", want: "learning-rate-"},
		{rule: paramNames, in: "9lives", want: "p9lives-"},
		{rule: paramNames, in: "", want: "p-"},
		{rule: resultNames, in: "Output", unchanged: true},
		{rule: resultNames, in: "row_count", unchanged: true},
		{rule: resultNames, in: "my.result", want: "my-result-"},
		{rule: resultNames, in: "_hidden_", want: "r_hidden_-"},
		{rule: resultNames, in: "Model Files", want: "Model-Files-"},
	}
	for _, tc := range cases {
		t.Run(tc.rule.kind+"/"+tc.in, func(t *testing.T) {
			got := tc.rule.sanitise(tc.in)
			if tc.unchanged {
				assert.Equal(t, tc.in, got)
			} else {
				assert.True(t, strings.HasPrefix(got, tc.want), "%q should start with %q", got, tc.want)
				assert.Regexp(t, `-[0-9a-f]{8}$`, got, "hash suffix")
			}
			assert.Equal(t, got, tc.rule.sanitise(tc.in), "deterministic")
			assertTektonValid(t, tc.rule, got)
		})
	}
}

func assertTektonValid(t *testing.T, rule nameRule, name string) {
	t.Helper()
	switch rule.kind {
	case "task":
		assert.Empty(t, validation.IsDNS1123Label(name), name)
	case "param":
		assert.Regexp(t, `^[a-zA-Z_][a-zA-Z0-9_.-]*$`, name)
	case "result":
		assert.Regexp(t, regexp.MustCompile(tektonv1.ResultNameFormat), name)
	}
}

func TestAssignIsInjectiveAndOrderFree(t *testing.T) {
	names := []string{"train", "Train", "TRAIN", "train.", "train_", "t r a i n", "train-", "a.b", "a_b", "a-b", "a b", "9", "", "-", strings.Repeat("x", 200), strings.Repeat("x", 201)}
	for _, rule := range []nameRule{taskNames, paramNames, resultNames} {
		t.Run(rule.kind, func(t *testing.T) {
			forward, err := rule.assign(names)
			require.NoError(t, err)
			reversed := append([]string{}, names...)
			for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
				reversed[i], reversed[j] = reversed[j], reversed[i]
			}
			backward, err := rule.assign(reversed)
			require.NoError(t, err)
			assert.Equal(t, forward, backward, "the mapping does not depend on order")
			seen := map[string]string{}
			for orig, name := range forward {
				if prev, dup := seen[name]; dup {
					t.Errorf("%q and %q both map to %q", prev, orig, name)
				}
				seen[name] = orig
				assertTektonValid(t, rule, name)
				assert.LessOrEqual(t, len(name), rule.maxLen)
			}
		})
	}
}

func TestAssignReportsAClash(t *testing.T) {
	hashed := taskNames.sanitise("Train")
	_, err := taskNames.assign([]string{"Train", hashed})
	assert.ErrorContains(t, err, "both become")
}
