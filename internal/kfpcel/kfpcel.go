// Package kfpcel evaluates the CEL expressions of a KFP IR as KFP's driver
// does: a task's triggerPolicy.condition over its inputs
// (inputs.parameter_values['x'], each a google.protobuf.Value of the
// input's KFP type), and a parameterExpressionSelector over a value
// (string_value, number_value, … and parseJson). Check is for compile
// time, so a condition that cannot work is refused before anything runs;
// Condition and Select run in the task that decides, at run time.
package kfpcel

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/types/known/structpb"
)

// inputsType is the CEL name of ExecutorInput.Inputs, the type of the
// condition's variable "inputs" (pipeline_spec.proto, package ml_pipelines).
const inputsType = "ml_pipelines.ExecutorInput.Inputs"

var (
	conditionEnv = sync.OnceValues(func() (*cel.Env, error) {
		return cel.NewEnv(
			cel.Types(&pipelinespec.ExecutorInput_Inputs{}),
			cel.Variable("inputs", cel.ObjectType(inputsType)),
		)
	})
	selectorEnv = sync.OnceValues(func() (*cel.Env, error) {
		return cel.NewEnv(
			cel.Variable("string_value", cel.StringType),
			cel.Variable("number_value", cel.DoubleType),
			cel.Variable("bool_value", cel.BoolType),
			cel.Variable("list_value", cel.ListType(cel.DynType)),
			cel.Variable("struct_value", cel.MapType(cel.StringType, cel.DynType)),
			parseJSON,
		)
	})
	// parseJson is the selector function the SDK writes for a loop item's
	// field: parseJson(string_value)["a"].
	parseJSON = cel.Function("parseJson",
		cel.Overload("parseJson_string", []*cel.Type{cel.StringType}, cel.DynType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.Value().(string)
				if !ok {
					return types.NewErr("parseJson: not a string")
				}
				var v any
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					return types.NewErr("parseJson: %v", err)
				}
				return types.DefaultTypeAdapter.NativeToValue(v)
			})))
)

// Check compiles a condition, refusing one that is not a boolean
// expression over inputs.
func Check(condition string) error {
	_, err := program(conditionEnv, condition, cel.BoolType)
	return err
}

// CheckSelector compiles a parameter expression selector.
func CheckSelector(selector string) error {
	_, err := program(selectorEnv, selector, nil)
	return err
}

// Condition evaluates a condition over the task's input values.
func Condition(condition string, values map[string]*structpb.Value) (bool, error) {
	prg, err := program(conditionEnv, condition, cel.BoolType)
	if err != nil {
		return false, err
	}
	out, _, err := prg.Eval(map[string]any{"inputs": &pipelinespec.ExecutorInput_Inputs{ParameterValues: values}})
	if err != nil {
		return false, fmt.Errorf("condition %q: %w", condition, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("condition %q is %v, not a boolean", condition, out)
	}
	return b, nil
}

// Select applies a parameter expression selector to a value, as KFP's
// driver does for a loop item's field.
func Select(selector string, v *structpb.Value) (*structpb.Value, error) {
	prg, err := program(selectorEnv, selector, nil)
	if err != nil {
		return nil, err
	}
	str := v.GetStringValue()
	if _, isString := v.GetKind().(*structpb.Value_StringValue); !isString {
		// A loop's item of a raw list of objects is an object; the SDK's
		// selector still parses string_value.
		data, err := v.MarshalJSON()
		if err != nil {
			return nil, err
		}
		str = string(data)
	}
	vars := map[string]any{
		"string_value": str, "number_value": v.GetNumberValue(), "bool_value": v.GetBoolValue(),
		"list_value": v.GetListValue().AsSlice(), "struct_value": v.GetStructValue().AsMap(),
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("selector %q: %w", selector, err)
	}
	native, err := out.ConvertToNative(jsonValueType)
	if err != nil {
		return nil, fmt.Errorf("selector %q: result %v: %w", selector, out, err)
	}
	return native.(*structpb.Value), nil
}

var jsonValueType = reflect.TypeOf(&structpb.Value{})

func program(envOf func() (*cel.Env, error), expr string, want *cel.Type) (cel.Program, error) {
	env, err := envOf()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("CEL expression %q: %w", expr, iss.Err())
	}
	if want != nil && !ast.OutputType().IsAssignableType(want) && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("CEL expression %q is of type %s, not %s", expr, ast.OutputType(), want)
	}
	return env.Program(ast)
}
