package kfpcel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
)

// The conditions are in the forms the KFP SDK writes for dsl.If, dsl.Elif
// and dsl.Else (an elif is the negation of the branches before it and its
// own condition; an else the negation of all).
func TestConditionsAsTheSDKWritesThem(t *testing.T) {
	str := structpb.NewStringValue
	num := structpb.NewNumberValue
	values := map[string]*structpb.Value{
		"pipelinechannel--flip-coin-Output": str("heads"),
		"pipelinechannel--int-0-Output":     num(3),
		"pipelinechannel--x":                num(0.5),
		"pipelinechannel--flag":             structpb.NewBoolValue(true),
		"y":                                 str("it's \"quoted\""),
	}
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{`inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'`, true},
		{`inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails'`, false},
		{`!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads') && inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails'`, false},
		{`!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'tails') && !(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'edge')`, true},
		{`int(inputs.parameter_values['pipelinechannel--int-0-Output']) > 2`, true},
		{`int(inputs.parameter_values['pipelinechannel--int-0-Output']) == 3`, true},
		{`inputs.parameter_values['pipelinechannel--int-0-Output'] == 3`, true},
		{`inputs.parameter_values['pipelinechannel--x'] < 0.6`, true},
		{`inputs.parameter_values['pipelinechannel--flag'] == true`, true},
		{`inputs.parameter_values['pipelinechannel--flip-coin-Output'] in ['tails', 'heads']`, true},
		{`inputs.parameter_values['pipelinechannel--int-0-Output'] > 5 || inputs.parameter_values['pipelinechannel--flip-coin-Output'] != 'heads'`, false},
		// A value is data, never expression text: quotes in it change nothing.
		{`inputs.parameter_values['y'] == "it's \"quoted\""`, true},
	} {
		require.NoError(t, Check(tc.cond), tc.cond)
		got, err := Condition(tc.cond, values)
		require.NoError(t, err, tc.cond)
		assert.Equal(t, tc.want, got, tc.cond)
	}
}

func TestBadConditionsAreRefusedAtCheck(t *testing.T) {
	for _, cond := range []string{
		`inputs.parameter_values['x'] ==`,      // syntax
		`outputs.parameter_values['x'] == 'a'`, // no such variable
		`inputs.parameter_values['x'] + 'a'`,   // not a boolean
		`inputs.no_such_field['x'] == 'a'`,     // no such field
	} {
		assert.Error(t, Check(cond), cond)
	}
}

func TestAConditionOnAMissingInputFails(t *testing.T) {
	_, err := Condition(`inputs.parameter_values['absent'] == 'a'`, map[string]*structpb.Value{})
	assert.ErrorContains(t, err, "absent")
}

func TestSelectorsOfLoopItems(t *testing.T) {
	item := structpb.NewStringValue(`{"a": 1, "b": "two", "c": [1, 2]}`)
	for sel, want := range map[string]string{
		`parseJson(string_value)["a"]`: `1`,
		`parseJson(string_value)["b"]`: `"two"`,
		`parseJson(string_value)["c"]`: `[1,2]`,
	} {
		require.NoError(t, CheckSelector(sel))
		v, err := Select(sel, item)
		require.NoError(t, err, sel)
		got, err := v.MarshalJSON()
		require.NoError(t, err)
		assert.JSONEq(t, want, string(got), sel)
	}
	_, err := Select(`parseJson(string_value)["missing"]`, item)
	assert.Error(t, err)
}
