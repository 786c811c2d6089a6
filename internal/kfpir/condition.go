package kfpir

import (
	"regexp"

	"k8s.io/apimachinery/pkg/selection"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

var (
	operand = `inputs\.parameter_values\[(?:'([^'\\]*)'|"([^"\\]*)")\]`
	literal = `(?:'([^'\\]*)'|"([^"\\]*)")`
	// conditionRE: operand OP literal; conditionReversedRE: literal OP operand.
	conditionRE         = regexp.MustCompile(`^\s*` + operand + `\s*(==|!=)\s*` + literal + `\s*$`)
	conditionReversedRE = regexp.MustCompile(`^\s*` + literal + `\s*(==|!=)\s*` + operand + `\s*$`)
)

// condition turns a triggerPolicy.condition of the form
// inputs.parameter_values['x'] == 'v' (or !=, or with the operands swapped)
// into a Tekton when expression on the task's input x; bound holds the
// PipelineTask-level values of the task's inputs.
func condition(task, cond string, bound map[string]string) (tektonv1.WhenExpression, error) {
	var key, op, value string
	if m := conditionRE.FindStringSubmatch(cond); m != nil {
		key, op, value = m[1]+m[2], m[3], m[4]+m[5]
	} else if m := conditionReversedRE.FindStringSubmatch(cond); m != nil {
		value, op, key = m[1]+m[2], m[3], m[4]+m[5]
	} else {
		return tektonv1.WhenExpression{}, unsupported(task, "condition syntax", "only inputs.parameter_values['x'] == or != a quoted string is supported, got %q", cond)
	}
	input, ok := bound[key]
	if !ok {
		return tektonv1.WhenExpression{}, unsupported(task, "condition on an unbound input", "condition %q refers to input %q, which the task does not bind", cond, key)
	}
	if err := checkLiteral(task, value); err != nil {
		return tektonv1.WhenExpression{}, err
	}
	operator := selection.In
	if op == "!=" {
		operator = selection.NotIn
	}
	return tektonv1.WhenExpression{Input: input, Operator: operator, Values: []string{value}}, nil
}
