package kfpir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestYAMLToJSONReadsYAML12(t *testing.T) {
	for _, tc := range []struct{ name, yaml, json, err string }{
		{name: "YAML 1.1's booleans are strings, as keys and values",
			yaml: "y: n\nyes: no\non: off\nY: N\n", json: `{"y":"n","yes":"no","on":"off","Y":"N"}`},
		{name: "true and false are booleans", yaml: "a: true\nb: False\n", json: `{"a":true,"b":false}`},
		{name: "numbers as written", yaml: "i: 200\nf: 1.0\ng: .5\nh: -3e2\nx: 0x1F\no: 0o17\np: +7\n", json: `{"i":200,"f":1.0,"g":0.5,"h":-3e2,"x":31,"o":15,"p":7}`},
		{name: "a number beyond int64 is its text", yaml: "i: 99999999999999999999999\n", json: `{"i":99999999999999999999999}`},
		{name: "a timestamp is text", yaml: "t: 2024-01-01T00:00:00Z\nd: 2024-01-01\n", json: `{"t":"2024-01-01T00:00:00Z","d":"2024-01-01"}`},
		{name: "null", yaml: "a: null\nb: ~\nc:\n", json: `{"a":null,"b":null,"c":null}`},
		{name: "a numeric key is its text", yaml: "1: a\n1.5: b\n", json: `{"1":"a","1.5":"b"}`},
		{name: "sequences and nesting, order kept", yaml: "z: [1, {b: 2, a: 1}]\na: x\n", json: `{"z":[1,{"b":2,"a":1}],"a":"x"}`},
		{name: "block scalars keep their text", yaml: "s: |\n  line $0 \"$@\"\n", json: `{"s":"line $0 \"$@\"\n"}`},
		{name: "anchors and aliases", yaml: "a: &x {k: v}\nb: *x\n", json: `{"a":{"k":"v"},"b":{"k":"v"}}`},
		{name: "JSON is YAML", yaml: `{"a": [1, "y", null]}`, json: `{"a":[1,"y",null]}`},
		{name: "a key twice", yaml: "a: 1\na: 2\n", err: `key "a" appears twice`},
		{name: "infinity", yaml: "a: .inf\n", err: "not a number JSON can hold"},
		{name: "a merge key", yaml: "a: &x {k: v}\nb: {<<: *x}\n", err: "merge keys"},
		{name: "not YAML", yaml: "a: [", err: "did not find expected"},
		{name: "aliases that multiply", yaml: "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
			err: "more than 262144 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := yamlToJSON([]byte(tc.yaml))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.json, string(got))
		})
	}
}

// A parameter the SDK leaves unquoted (y, on, ...) is a parameter, not a
// boolean, whether it names an input or is a value.
func TestUnquotedYAML11BooleanWordsAreParameters(t *testing.T) {
	spec, err := Parse([]byte(`
components:
  comp-echo:
    executorLabel: exec-echo
    inputDefinitions:
      parameters:
        y: {parameterType: STRING}
        on: {parameterType: STRING, defaultValue: off, isOptional: true}
deploymentSpec:
  executors:
    exec-echo:
      container: {image: alpine, command: [echo, "{{$.inputs.parameters['y']}}", "{{$.inputs.parameters['on']}}"]}
pipelineInfo: {name: words}
root:
  dag:
    tasks:
      echo:
        componentRef: {name: comp-echo}
        inputs:
          parameters:
            y: {runtimeValue: {constant: n}}
        taskInfo: {name: echo}
schemaVersion: 2.1.0
`))
	require.NoError(t, err)
	p, err := Compile(spec, Options{Name: "words"})
	require.NoError(t, err)
	task := p.Spec.Tasks[0]
	assert.Equal(t, "n", task.Params[0].Value.StringVal)
	assert.Equal(t, "y", task.Params[0].Name)
	var onDefault string
	for _, ps := range task.TaskSpec.TaskSpec.Params {
		if ps.Name == "on" {
			onDefault = ps.Default.StringVal
		}
	}
	assert.Equal(t, "off", onDefault)
}
