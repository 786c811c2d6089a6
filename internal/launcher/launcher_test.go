package launcher

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
)

// addSpec is a Python function component as the KFP SDK compiles
//
//	@dsl.component
//	def add(a: float, b: float = 1.0, note: Optional[str] = None) -> float
//
// with an input and an output artifact added: the executor gets the whole
// executor input as {{$}}.
func addSpec() Spec {
	return Spec{
		Task: "add",
		Inputs: Inputs{
			Parameters: map[string]Parameter{
				"a":    {Type: TypeDouble},
				"b":    {Type: TypeDouble, Optional: true, Default: json.RawMessage(`1.0`)},
				"n":    {Type: TypeInteger},
				"note": {Type: TypeString, Optional: true},
			},
			Artifacts: map[string]Artifact{"data": {SchemaTitle: "system.Dataset", SchemaVersion: "0.0.1"}},
		},
		Outputs: Outputs{
			Parameters: map[string]Parameter{"Output": {Type: TypeDouble}},
			Artifacts:  map[string]Artifact{"model": {SchemaTitle: "system.Model", SchemaVersion: "0.0.1"}},
		},
		Command: []string{"sh", "-c", "python3 -m kfp.dsl.executor_main \"$@\"", "--"},
		Args:    []string{"--executor_input", "{{$}}", "--function_to_execute", "add"},
	}
}

func addRuntime() Runtime {
	return Runtime{
		Parameters: map[string]string{"a": "1.5", "n": "3"},
		Artifacts:  map[string]RuntimeArtifact{"data": {URI: "s3://bucket/run-1/load/data", Metadata: json.RawMessage(`{"rows":100}`)}},
		OutputURI:  "s3://bucket/run-1/add",
		OutputDir:  "/kfp/outputs",
		JobName:    "run-1", JobUID: "uid-1", TaskUID: "task-uid-1", PipelineRoot: "s3://bucket",
	}
}

func TestTheExecutorInputOfAPythonFunctionComponent(t *testing.T) {
	ei, err := ExecutorInput(addSpec(), addRuntime())
	require.NoError(t, err)
	got, err := protojson.Marshal(ei)
	require.NoError(t, err)
	// KFP's field names and shapes: parameterValues typed, the optional
	// note absent, b its default, artifacts as lists, outputs with files.
	assert.JSONEq(t, `{
	  "inputs": {
	    "parameterValues": {"a": 1.5, "b": 1, "n": 3},
	    "artifacts": {"data": {"artifacts": [{"name": "data", "type": {"schemaTitle": "system.Dataset", "schemaVersion": "0.0.1"},
	      "uri": "s3://bucket/run-1/load/data", "metadata": {"rows": 100}}]}}
	  },
	  "outputs": {
	    "parameters": {"Output": {"outputFile": "/kfp/outputs/Output"}},
	    "artifacts": {"model": {"artifacts": [{"name": "model", "type": {"schemaTitle": "system.Model", "schemaVersion": "0.0.1"},
	      "uri": "s3://bucket/run-1/add/model", "metadata": {}}]}},
	    "outputFile": "/kfp/outputs/executor_output.json"
	  }
	}`, string(got))

	argv, err := Resolve(addSpec(), ei, addRuntime())
	require.NoError(t, err)
	require.Len(t, argv, 8)
	assert.Equal(t, []string{"sh", "-c", "python3 -m kfp.dsl.executor_main \"$@\"", "--", "--executor_input"}, argv[:5])
	assert.JSONEq(t, string(got), argv[5], "{{$}} is the executor input's JSON, one argument")
	assert.Equal(t, []string{"--function_to_execute", "add"}, argv[6:])
}

func TestAMissingRequiredInputIsAnError(t *testing.T) {
	rt := addRuntime()
	delete(rt.Parameters, "a")
	_, err := ExecutorInput(addSpec(), rt)
	assert.EqualError(t, err, `task "add": input parameter "a" has no value and no default`)
	rt = addRuntime()
	delete(rt.Artifacts, "data")
	_, err = ExecutorInput(addSpec(), rt)
	assert.EqualError(t, err, `task "add": input artifact "data" was not given`)
	rt = addRuntime()
	rt.Parameters["n"] = "3.5"
	_, err = ExecutorInput(addSpec(), rt)
	assert.EqualError(t, err, `task "add": input parameter "n": "3.5" is not an integer`)
}

func TestValueAndTextRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ, text, want, err string
	}{
		{typ: TypeString, text: "y", want: "y"}, // YAML's boolean words are strings here
		{typ: TypeString, text: "off", want: "off"},
		{typ: TypeString, text: "", want: ""},
		{typ: TypeString, text: `{"a": 1}`, want: `{"a": 1}`},
		{typ: "", text: "x", want: "x"},
		{typ: TypeInteger, text: "200", want: "200"},
		{typ: TypeInteger, text: "200.0", want: "200"},
		{typ: TypeInteger, text: "-7", want: "-7"},
		{typ: TypeInteger, text: "1e3", want: "1000"},
		{typ: TypeInteger, text: "0.5", err: `"0.5" is not an integer`},
		{typ: TypeInteger, text: "x", err: `"x" is not an integer`},
		{typ: TypeDouble, text: "0.1", want: "0.1"},
		{typ: TypeDouble, text: "2", want: "2"},
		{typ: TypeDouble, text: "NaN", err: `"NaN" is not a number`},
		{typ: TypeBoolean, text: "true", want: "true"},
		{typ: TypeBoolean, text: "False", want: "false"},
		{typ: TypeBoolean, text: "1", err: `"1" is not a boolean (true or false)`},
		{typ: TypeBoolean, text: "y", err: `"y" is not a boolean (true or false)`},
		{typ: TypeList, text: `[1, "a", {"b": true}]`, want: `[1,"a",{"b":true}]`},
		{typ: TypeList, text: `{"a": 1}`, err: `"{\"a\": 1}" is not a JSON list`},
		{typ: TypeStruct, text: `{"b": [1, 2], "a": null}`, want: `{"a":null,"b":[1,2]}`},
		{typ: TypeStruct, text: `[1]`, err: `"[1]" is not a JSON object`},
		{typ: TypeStruct, text: `{`, err: `"{" is not JSON`},
		{typ: "BYTES", text: "x", err: `unknown parameter type "BYTES"`},
	} {
		t.Run(tc.typ+" "+tc.text, func(t *testing.T) {
			v, err := Value(tc.typ, tc.text)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, Text(v))
			again, err := Value(tc.typ, Text(v))
			require.NoError(t, err, "Text's output reads back")
			assert.Equal(t, Text(v), Text(again))
		})
	}
}

func TestPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		rt   func(*Runtime)
		want []string
		err  string
	}{
		{name: "parameters as text", args: []string{"{{$.inputs.parameters['a']}}", `--n={{$.inputs.parameters["n"]}}`, "{{$.inputs.parameters['b']}}"},
			want: []string{"1.5", "--n=3", "1"}},
		{name: "output files", args: []string{"{{$.outputs.parameters['Output'].output_file}}", "{{$.outputs.output_file}}"},
			want: []string{"/kfp/outputs/Output", "/kfp/outputs/executor_output.json"}},
		{name: "artifacts", args: []string{"{{$.inputs.artifacts['data'].uri}}", "{{$.inputs.artifacts['data'].path}}",
			"{{$.inputs.artifacts['data'].metadata}}", "{{$.inputs.artifacts['data'].metadata['rows']}}", "{{$.outputs.artifacts['model'].path}}"},
			want: []string{"s3://bucket/run-1/load/data", "/s3/bucket/run-1/load/data", `{"rows":100}`, "100", "/s3/bucket/run-1/add/model"}},
		{name: "job and task", args: []string{"{{$.pipeline_job_name}}/{{$.pipeline_task_name}}", "{{$.pipeline_job_uuid}}", "{{$.pipeline_task_uuid}}", "{{$.pipeline_root}}"},
			want: []string{"run-1/add", "uid-1", "task-uid-1", "s3://bucket"}},
		{name: "Concat", args: []string{`{"Concat": ["--a=", "{{$.inputs.parameters['a']}}", "/", "{{$.pipeline_task_name}}"]}`},
			want: []string{"--a=1.5/add"}},
		{name: "IfPresent of an unset optional input: nothing", args: []string{"x", `{"IfPresent": {"InputName": "note", "Then": ["--note", "{{$.inputs.parameters['note']}}"]}}`, "y"},
			want: []string{"x", "y"}},
		{name: "IfPresent of a set optional input: Then", args: []string{`{"IfPresent": {"InputName": "note", "Then": ["--note", "{{$.inputs.parameters['note']}}"]}}`},
			rt: func(rt *Runtime) { rt.Parameters["note"] = "hi there" }, want: []string{"--note", "hi there"}},
		{name: "IfPresent with Else", args: []string{`{"IfPresent": {"InputName": "note", "Then": "set", "Else": {"Concat": ["un", "set"]}}}`},
			want: []string{"unset"}},
		{name: "an f-string parameter resolves its own placeholders", args: []string{"{{$.inputs.parameters['note']}}"},
			rt: func(rt *Runtime) { rt.Parameters["note"] = "{{$.inputs.parameters['a']}}-{{$.pipeline_job_name}}" }, want: []string{"1.5-run-1"}},
		{name: "text around placeholders is kept, braces and all", args: []string{"{x} {{$.inputs.parameters['a']}} $(params.y) {{not}}"},
			want: []string{"{x} 1.5 $(params.y) {{not}}"}},
		{name: "an unset optional input outside IfPresent", args: []string{"{{$.inputs.parameters['note']}}"},
			err: `task "add": placeholder {{$.inputs.parameters['note']}}: input parameter "note" has no value`},
		{name: "an unknown placeholder", args: []string{"{{$.inputs.parameters['a'].json_escape[1]}}"},
			err: `placeholder {{$.inputs.parameters['a'].json_escape[1]}} is not supported`},
		{name: "an unknown output", args: []string{"{{$.outputs.parameters['nope'].output_file}}"}, err: `no output parameter "nope"`},
		{name: "a broken Concat", args: []string{`{"Concat": "x"}`}, err: `Concat of a string, not a list`},
		{name: "an unknown structure", args: []string{`{"Concat": [{"Repeat": 2}]}`}, err: `unknown structured placeholder "Repeat"`},
		{name: "not JSON", args: []string{`{"IfPresent": `}, err: `is not JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, rt := addSpec(), addRuntime()
			spec.Command, spec.Args = nil, tc.args
			if tc.rt != nil {
				tc.rt(&rt)
			}
			ei, err := ExecutorInput(spec, rt)
			require.NoError(t, err)
			got, err := Resolve(spec, ei, rt)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLocalPath(t *testing.T) {
	for uri, want := range map[string]string{
		"gs://b/k/m":              "/gcs/b/k/m",
		"minio://mlpipeline/x":    "/minio/mlpipeline/x",
		"s3://b/run/task/a":       "/s3/b/run/task/a",
		"file:///artifacts/r/t/a": "/artifacts/r/t/a",
	} {
		got, err := LocalPath(uri)
		require.NoError(t, err, uri)
		assert.Equal(t, want, got, uri)
	}
	for _, uri := range []string{"https://x/y", "file://relative", "oci://registry/x", ""} {
		_, err := LocalPath(uri)
		assert.Error(t, err, uri)
	}
}

// files is a readFile over a map.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if data, ok := m[name]; ok {
			return []byte(data), nil
		}
		return nil, fmt.Errorf("open %s: %w", name, fs.ErrNotExist)
	}
}

func TestCollect(t *testing.T) {
	spec := addSpec()
	spec.Outputs.Parameters["count"] = Parameter{Type: TypeInteger}
	spec.Outputs.Parameters["labels"] = Parameter{Type: TypeList}
	ei, err := ExecutorInput(spec, addRuntime())
	require.NoError(t, err)

	t.Run("executor output and parameter files", func(t *testing.T) {
		res, err := Collect(spec, ei, files(map[string]string{
			// As the SDK's executor writes it: parameterValues and the artifacts' metadata.
			"/kfp/outputs/executor_output.json": `{"parameterValues": {"Output": 2.5, "count": 4},
				"artifacts": {"model": {"artifacts": [{"name": "model", "uri": "s3://bucket/run-1/add/model", "metadata": {"accuracy": 0.9, "pushed": 1}}]}}}`,
			"/kfp/outputs/labels": `["a", "b"]`,
		}))
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"Output": "2.5", "count": "4", "labels": `["a","b"]`}, res.Parameters)
		assert.Equal(t, "s3://bucket/run-1/add/model", res.Artifacts["model"].URI)
		assert.JSONEq(t, `{"accuracy": 0.9, "pushed": 1}`, string(res.Artifacts["model"].Metadata))
	})
	t.Run("no executor output: files only", func(t *testing.T) {
		res, err := Collect(spec, ei, files(map[string]string{
			"/kfp/outputs/Output": "3", "/kfp/outputs/count": "5", "/kfp/outputs/labels": "[]",
		}))
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"Output": "3", "count": "5", "labels": "[]"}, res.Parameters)
		assert.JSONEq(t, `{}`, string(res.Artifacts["model"].Metadata))
	})
	for name, tc := range map[string]struct {
		files map[string]string
		err   string
	}{
		"an output never written": {map[string]string{"/kfp/outputs/Output": "3", "/kfp/outputs/count": "5"},
			`output parameter "labels" was not written`},
		"a value not of its type": {map[string]string{"/kfp/outputs/Output": "3", "/kfp/outputs/count": "five", "/kfp/outputs/labels": "[]"},
			`output parameter "count": "five" is not an integer`},
		"executor output not JSON": {map[string]string{"/kfp/outputs/executor_output.json": "{"},
			`is not an ExecutorOutput`},
		"a typed value of the wrong type": {map[string]string{"/kfp/outputs/executor_output.json": `{"parameterValues": {"Output": 1, "count": 1.5, "labels": []}}`},
			`output parameter "count" in executor_output.json: "1.5" is not an integer`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Collect(spec, ei, files(tc.files))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestAFinalStatusSpeaksKFPsWords(t *testing.T) {
	for tekton, kfp := range map[string]string{"Succeeded": "SUCCEEDED", "Completed": "SUCCEEDED", "Failed": "FAILED", "None": "CANCELLED"} {
		v, err := Value(TypeTaskFinalStatus, `{"error":{},"pipelineJobResourceName":"run-1","pipelineTaskName":"exit-handler-1","state":"`+tekton+`"}`)
		require.NoError(t, err)
		fields := v.GetStructValue().GetFields()
		assert.Equal(t, kfp, fields["state"].GetStringValue())
		assert.Equal(t, "exit-handler-1", fields["pipelineTaskName"].GetStringValue())
		assert.Equal(t, kfp == "FAILED", fields["error"].GetStructValue().GetFields()["message"] != nil)
	}
	_, err := Value(TypeTaskFinalStatus, `"Succeeded"`)
	assert.Error(t, err, "a final status is an object")
}

// TestAnArtifactListIsEveryItemInOrder: an input artifact list
// (dsl.Collected artifacts of a loop) reaches the executor as KFP's
// driver gives it, inputs.artifacts[name].artifacts one per iteration,
// with each one's metadata; a loop without iterations gives an empty list.
func TestAnArtifactListIsEveryItemInOrder(t *testing.T) {
	spec := addSpec()
	spec.Inputs.Artifacts["data"] = Artifact{SchemaTitle: "system.Dataset", SchemaVersion: "0.0.1", List: true}
	rt := addRuntime()
	rt.Artifacts = nil
	rt.ArtifactLists = map[string][]RuntimeArtifact{"data": {
		{URI: "file:///kfp/run-1/double-0/Output", Metadata: json.RawMessage(`{"n":1}`)},
		{URI: "file:///kfp/run-1/double-1/Output"},
	}}
	ei, err := ExecutorInput(spec, rt)
	require.NoError(t, err)
	got, err := protojson.Marshal(ei.GetInputs().GetArtifacts()["data"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"artifacts": [
	  {"name": "data", "type": {"schemaTitle": "system.Dataset", "schemaVersion": "0.0.1"}, "uri": "file:///kfp/run-1/double-0/Output", "metadata": {"n": 1}},
	  {"name": "data", "type": {"schemaTitle": "system.Dataset", "schemaVersion": "0.0.1"}, "uri": "file:///kfp/run-1/double-1/Output", "metadata": {}}]}`, string(got))

	rt.ArtifactLists["data"] = []RuntimeArtifact{}
	ei, err = ExecutorInput(spec, rt)
	require.NoError(t, err)
	assert.Empty(t, ei.GetInputs().GetArtifacts()["data"].GetArtifacts(), "no iterations: an empty list")

	delete(rt.ArtifactLists, "data")
	_, err = ExecutorInput(spec, rt)
	assert.ErrorContains(t, err, `input artifact "data" was not given`)

	// A container component takes the whole list (the SDK's
	// InputListOfArtifactsPlaceholder); a field of it is refused.
	spec.Command, spec.Args = []string{"join"}, []string{"{{$.inputs.artifacts['data']}}"}
	rt.ArtifactLists["data"] = []RuntimeArtifact{{URI: "file:///a"}, {URI: "file:///b", Metadata: json.RawMessage(`{"k":"v"}`)}}
	ei, err = ExecutorInput(spec, rt)
	require.NoError(t, err)
	argv, err := Resolve(spec, ei, rt)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"name": "data", "type": {"schemaTitle": "system.Dataset", "schemaVersion": "0.0.1"}, "uri": "file:///a", "metadata": {}},
	  {"name": "data", "type": {"schemaTitle": "system.Dataset", "schemaVersion": "0.0.1"}, "uri": "file:///b", "metadata": {"k": "v"}}]`, argv[1])
	spec.Args = []string{"{{$.inputs.artifacts['data'].uri}}"}
	_, err = Resolve(spec, ei, rt)
	assert.ErrorContains(t, err, "only the whole list has a placeholder")
}
