package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// TestMain lets the test binary stand in for a component: with
// KFP_TASK_TEST_EXECUTOR set, it is a Python function component's executor
// as KFP's SDK behaves (fixture): it reads --executor_input, adds the
// parameters a and b, writes the sum and the model artifact's metadata to
// the executor output file, and the model's bytes to the artifact's path.
func TestMain(m *testing.M) {
	if os.Getenv("KFP_TASK_TEST_EXECUTOR") != "" {
		if err := fakeExecutor(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "executor:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeExecutor(args []string) error {
	if len(args) != 4 || args[0] != "--executor_input" || args[2] != "--function_to_execute" {
		return fmt.Errorf("arguments %q", args)
	}
	if args[3] == "fail" {
		return fmt.Errorf("the component failed")
	}
	var in struct {
		Inputs struct {
			ParameterValues map[string]any `json:"parameterValues"`
			Artifacts       map[string]struct {
				Artifacts []struct{ URI string } `json:"artifacts"`
			} `json:"artifacts"`
		} `json:"inputs"`
		Outputs struct {
			Artifacts map[string]struct {
				Artifacts []struct{ URI string } `json:"artifacts"`
			} `json:"artifacts"`
			OutputFile string `json:"outputFile"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(args[1]), &in); err != nil {
		return err
	}
	a, _ := in.Inputs.ParameterValues["a"].(float64)
	b, _ := in.Inputs.ParameterValues["b"].(float64)
	var data []byte // every item of data, an artifact list's too
	for _, item := range in.Inputs.Artifacts["data"].Artifacts {
		b, err := os.ReadFile(item.URI[len("file://"):])
		if err != nil {
			return err
		}
		data = append(data, b...)
	}
	model := in.Outputs.Artifacts["model"].Artifacts[0].URI[len("file://"):]
	if err := os.WriteFile(model, append([]byte("model of "), data...), 0o644); err != nil {
		return err
	}
	out := fmt.Sprintf(`{"parameterValues": {"Output": %s}, "artifacts": {"model": {"artifacts": [{"metadata": {"pushed": 1}}]}}}`,
		strconv.FormatFloat(a+b, 'g', -1, 64))
	return os.WriteFile(in.Outputs.OutputFile, []byte(out), 0o644)
}

func TestLaunchRunsAComponentUnderTheExecutorProtocol(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte("1,2,3"), 0o644))
	spec := func(function string) string {
		s := launcher.Spec{
			Task: "add",
			Inputs: launcher.Inputs{
				Parameters: map[string]launcher.Parameter{"a": {Type: launcher.TypeDouble}, "b": {Type: launcher.TypeDouble, Default: json.RawMessage("1")}},
				Artifacts:  map[string]launcher.Artifact{"data": {SchemaTitle: "system.Dataset"}},
			},
			Outputs: launcher.Outputs{
				Parameters: map[string]launcher.Parameter{"Output": {Type: launcher.TypeDouble}},
				Artifacts:  map[string]launcher.Artifact{"model": {SchemaTitle: "system.Model"}},
			},
			Command: []string{self},
			Args:    []string{"--executor_input", "{{$}}", "--function_to_execute", function},
		}
		data, err := json.Marshal(s)
		require.NoError(t, err)
		return string(data)
	}
	args := func(function string) []string {
		return []string{"--spec", spec(function), "--param", "a=1.5",
			"--artifact", "data=file://" + filepath.Join(dir, "data.csv"), "--artifact-metadata", `data={"rows": 3}`,
			"--output-uri", "file://" + filepath.Join(dir, "run-1", "add"), "--output-dir", filepath.Join(dir, "outputs"),
			"--result", "Output=" + filepath.Join(dir, "result-Output"), "--artifact-result", "model=" + filepath.Join(dir, "result-model"),
			"--job-name", "run-1", "--pipeline-root", "file://" + dir}
	}

	require.NoError(t, launch(args("add")))
	sum, err := os.ReadFile(filepath.Join(dir, "result-Output"))
	require.NoError(t, err)
	assert.Equal(t, "2.5", string(sum), "a from --param, b its default, the sum from executor_output.json")
	model, err := os.ReadFile(filepath.Join(dir, "result-model"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri": "file://`+filepath.Join(dir, "run-1", "add", "model")+`", "metadata": {"pushed": 1}}`, string(model))
	bytes, err := os.ReadFile(filepath.Join(dir, "run-1", "add", "model"))
	require.NoError(t, err)
	assert.Equal(t, "model of 1,2,3", string(bytes), "the input artifact read, the output artifact written where its URI says")

	err = launch(args("fail"))
	assert.Equal(t, exitError{3}, err, "the component's exit code is the step's")

	bad := append(args("add"), "--artifact", "other=s3://bucket/x")
	bad[len(bad)-1] = "data=s3://bucket/x" // replaces nothing: a second --artifact data is refused
	err = launch(bad)
	assert.ErrorContains(t, err, `"data" given twice`)
	s3 := args("add")
	s3[5] = "data=s3://bucket/data.csv"
	err = launch(s3)
	assert.ErrorContains(t, err, `task "add": input artifact s3://bucket/data.csv: the s3:// store is not supported; the supported stores are`)
	gs := args("add")
	gs[5] = "data=gs://ml-pipeline-playground/shakespeare1.txt"
	assert.ErrorContains(t, launch(gs), "the gs:// store is not supported", "refused before the component runs")
	outside := args("add")
	outside[5] = "data=file:///etc/passwd"
	assert.ErrorContains(t, launch(outside), "is not under the pipeline root")
	meta := args("add")
	meta[7] = `data={"name": "{{$.inputs.parameters['metadata']}}"}`
	assert.ErrorContains(t, launch(meta), `input parameter "metadata" has no value`)
	require.NoError(t, launch(append(meta, "--artifact-metadata-param", "data:metadata=m")), "an importer's metadata filled from its inputs")
	missing := args("add")[:2]
	err = launch(append(missing, "--output-dir", dir))
	assert.ErrorContains(t, err, `input parameter "a" has no value and no default`)

	// --param-file: an earlier step's result, its text exactly.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "earlier-a"), []byte("4"), 0o644))
	fromFile := args("add")
	fromFile[2], fromFile[3] = "--param-file", "a="+filepath.Join(dir, "earlier-a")
	require.NoError(t, launch(fromFile))
	sum, err = os.ReadFile(filepath.Join(dir, "result-Output"))
	require.NoError(t, err)
	assert.Equal(t, "5", string(sum), "a from the file")
	fromFile[3] = "a=" + filepath.Join(dir, "no-such-result")
	assert.ErrorContains(t, launch(fromFile), `launch: input "a"`, "a missing result fails the step")
}

func TestCollectedListsAreTypedLists(t *testing.T) {
	got, err := collectedLists(namedFlags{"nums": "NUMBER_INTEGER", "none": "STRING"}, listFlags{"nums=2", "nums=4"},
		namedFlags{"words": "STRING"}, []string{"a", "b c", "--"})
	require.NoError(t, err)
	assert.JSONEq(t, `[2, 4]`, got["nums"])
	assert.JSONEq(t, `[]`, got["none"], "a loop over no items collects an empty list")
	assert.JSONEq(t, `["a", "b c", "--"]`, got["words"], "everything after the -- is an item")

	_, err = collectedLists(namedFlags{"nums": "NUMBER_INTEGER"}, listFlags{"nums=two"}, nil, nil)
	assert.ErrorContains(t, err, `input "nums", item 0`)
	_, err = collectedLists(namedFlags{}, listFlags{"undeclared=1"}, nil, nil)
	assert.Error(t, err)
}

// TestASecondExecutionIsCached runs the same component twice with the same
// inputs in two runs: the second reuses the first's outputs (parameters,
// artifact bytes and metadata) without running, and says so; a changed
// input, or the run's switch off, runs it again.
func TestASecondExecutionIsCached(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, ".kfp-cache")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte("1,2,3"), 0o644))
	spec, err := json.Marshal(launcher.Spec{
		Task: "add",
		Inputs: launcher.Inputs{
			Parameters: map[string]launcher.Parameter{"a": {Type: launcher.TypeDouble}, "b": {Type: launcher.TypeDouble, Default: json.RawMessage("1")}},
			Artifacts:  map[string]launcher.Artifact{"data": {SchemaTitle: "system.Dataset"}},
		},
		Outputs: launcher.Outputs{
			Parameters: map[string]launcher.Parameter{"Output": {Type: launcher.TypeDouble}},
			Artifacts:  map[string]launcher.Artifact{"model": {SchemaTitle: "system.Model"}},
		},
		Command: []string{self},
		Args:    []string{"--executor_input", "{{$}}", "--function_to_execute", "add"},
	})
	require.NoError(t, err)
	run := func(name, a, caching string) (sum, model, cached string) {
		out := filepath.Join(dir, name)
		require.NoError(t, launch([]string{"--spec", string(spec), "--param", "a=" + a,
			"--artifact", "data=file://" + filepath.Join(dir, "data.csv"), "--pipeline-root", "file://" + dir,
			"--output-uri", "file://" + filepath.Join(out, "add"), "--output-dir", filepath.Join(out, "outputs"),
			"--result", "Output=" + filepath.Join(out, "result-Output"), "--artifact-result", "model=" + filepath.Join(out, "result-model"),
			"--job-name", name, "--cache-dir", cacheDir, "--caching", caching, "--image", "img:1",
			"--cached-result", filepath.Join(out, "cached")}))
		read := func(f string) string {
			data, err := os.ReadFile(filepath.Join(out, f))
			require.NoError(t, err, f)
			return string(data)
		}
		return read("result-Output"), read("add/model"), read("cached")
	}
	sum, model, cached := run("run-1", "1.5", "true")
	assert.Equal(t, []string{"2.5", "model of 1,2,3", "false"}, []string{sum, model, cached})

	// The executor is gone: only the cache can answer.
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "")
	sum, model, cached = run("run-2", "1.5", "true")
	assert.Equal(t, []string{"2.5", "model of 1,2,3", "true"}, []string{sum, model, cached}, "outputs reused")
	meta, err := os.ReadFile(filepath.Join(dir, "run-2", "result-model"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri": "file://`+filepath.Join(dir, "run-2", "add", "model")+`", "metadata": {"pushed": 1}}`, string(meta), "at this run's URI, with the metadata reported")

	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	sum, _, cached = run("run-3", "2.5", "true")
	assert.Equal(t, []string{"3.5", "false"}, []string{sum, cached}, "another input runs")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte("4,5"), 0o644))
	_, model, cached = run("run-4", "1.5", "true")
	assert.Equal(t, []string{"model of 4,5", "false"}, []string{model, cached}, "another input artifact's content runs")
	_, _, cached = run("run-5", "1.5", "false")
	assert.Equal(t, "false", cached, "the run's switch off runs it")
	entries, err := os.ReadDir(cacheDir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "runs 1, 3 and 4 stored; the switched-off run stored nothing")

	err = launch([]string{"--spec", string(spec), "--param", "a=1", "--artifact", "data=file://" + filepath.Join(dir, "data.csv"), "--pipeline-root", "file://" + dir,
		"--output-uri", "file://" + filepath.Join(dir, "x"), "--output-dir", filepath.Join(dir, "x-out"), "--cache-dir", cacheDir, "--caching", "yes"})
	assert.ErrorContains(t, err, "want true or false")
}

// TestLaunchGivesAnArtifactListEveryItem: the artifacts of a loop's
// iterations, each as its producer's --artifact-result wrote it, reach
// the executor as one artifact list in order, from --artifact-item (an
// unrolled loop) or from the arguments after -- (Tekton's gathered
// results of a fanned-out task).
func TestLaunchGivesAnArtifactListEveryItem(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	dir := t.TempDir()
	var items []string
	for i, text := range []string{"one;", "two;", "three;"} {
		file := filepath.Join(dir, "double-"+strconv.Itoa(i), "Output")
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
		items = append(items, `{"uri": "file://`+file+`", "metadata": {"i": `+strconv.Itoa(i)+`}}`)
	}
	data := executorSpec(t, self, "join", "join", true)
	common := func(task string) []string {
		return []string{"--spec", string(data), "--param", "a=1", "--output-uri", "file://" + filepath.Join(dir, task),
			"--output-dir", filepath.Join(dir, task, "outputs"), "--result", "Output=" + filepath.Join(dir, task, "result")}
	}
	model := func(task string) string {
		b, err := os.ReadFile(filepath.Join(dir, task, "model"))
		require.NoError(t, err)
		return string(b)
	}

	args := common("unrolled")
	for _, item := range items {
		args = append(args, "--artifact-item", "data="+item)
	}
	require.NoError(t, launch(args))
	assert.Equal(t, "model of one;two;three;", model("unrolled"))

	require.NoError(t, launch(append(append(common("matrix"), "--artifact-rest", "data", "--"), items[2], items[0])))
	assert.Equal(t, "model of three;one;", model("matrix"), "the gathered results, in Tekton's order")

	require.NoError(t, launch(common("none")))
	assert.Equal(t, "model of ", model("none"), "a loop without iterations: an empty list")

	err = launch(append(common("bad"), "--artifact-item", "data=file:///x"))
	assert.ErrorContains(t, err, `is not an artifact's {uri, metadata}`)
	err = launch(append(common("bad"), "--artifact-rest", "data", "--collect-rest", "a=NUMBER_DOUBLE", "--", items[0]))
	assert.ErrorContains(t, err, "the arguments after -- are one list")
}

// TestCollectedListsOfNestedLoopsAreListsOfLists: --item-shape regroups
// the items as KFP collects them over nested loops.
func TestCollectedListsOfNestedLoopsAreListsOfLists(t *testing.T) {
	lists, err := collectedLists(namedFlags{"nums": "NUMBER_INTEGER"}, listFlags{"nums=1", "nums=2", "nums=3", "nums=4", "nums=5"}, nil, nil)
	require.NoError(t, err)
	require.NoError(t, nestLists(lists, namedFlags{"nums": "[2,[1,2],0]"}))
	assert.JSONEq(t, `[[1, 2], [[3], [4, 5]], []]`, lists["nums"])

	for shape, want := range map[string]string{"[2,2]": "more than the shape holds", "[4,4]": "fewer items", "[1.5]": "not a count", `{"a":1}`: "neither"} {
		lists, _ := collectedLists(namedFlags{"nums": "NUMBER_INTEGER"}, listFlags{"nums=1", "nums=2", "nums=3", "nums=4", "nums=5"}, nil, nil)
		assert.ErrorContains(t, nestLists(lists, namedFlags{"nums": shape}), want, shape)
	}
	assert.ErrorContains(t, nestLists(map[string]string{}, namedFlags{"x": "[1]"}), "for no collected input")
}

// TestLaunchGivesALoopItsArtifact: an iteration of a loop over an
// artifact list takes one artifact as its producer reported it
// (--artifact-json, one Matrix item).
func TestLaunchGivesALoopItsArtifact(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("KFP_TASK_TEST_EXECUTOR", "1")
	dir := t.TempDir()
	file := filepath.Join(dir, "make-1", "out")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte("two"), 0o644))
	item := `{"uri": "file://` + file + `", "metadata": {"length": 3}}`
	data := executorSpec(t, self, "show", "show", false)
	args := func(task string, extra ...string) []string {
		return append([]string{"--spec", string(data), "--param", "a=1", "--output-uri", "file://" + filepath.Join(dir, task),
			"--output-dir", filepath.Join(dir, task, "outputs"), "--result", "Output=" + filepath.Join(dir, task, "result"), "--pipeline-root", "file://" + dir}, extra...)
	}
	require.NoError(t, launch(args("show", "--artifact-json", "data="+item)))
	b, err := os.ReadFile(filepath.Join(dir, "show", "model"))
	require.NoError(t, err)
	assert.Equal(t, "model of two", string(b))

	for extra, want := range map[string][]string{
		"not an artifact": {"--artifact-json", "data=file:///x"},
		"no such input":   {"--artifact-json", "other=" + item},
		"given twice":     {"--artifact-json", "data=" + item, "--artifact", "data=file://" + file},
	} {
		assert.Error(t, launch(args("bad", want...)), extra)
	}
	var s launcher.Spec
	require.NoError(t, json.Unmarshal(data, &s))
	var ra launcher.RuntimeArtifact
	c := collectedFlags{artifactJSON: namedFlags{"data": item}}
	got := map[string]launcher.RuntimeArtifact{}
	require.NoError(t, c.jsonArtifacts(s, got))
	ra = got["data"]
	assert.Equal(t, "file://"+file, ra.URI)
	assert.JSONEq(t, `{"length": 3}`, string(ra.Metadata), "the producer's metadata reaches the executor input")
}

// executorSpec is the launcher.Spec (JSON) of a Python-function-shaped
// component run by the test executor self: input parameter a, input
// artifact data (a list if dataList), outputs Output and model; fn is the
// function it executes.
func executorSpec(t *testing.T, self, task, fn string, dataList bool) []byte {
	t.Helper()
	data, err := json.Marshal(launcher.Spec{
		Task: task,
		Inputs: launcher.Inputs{
			Parameters: map[string]launcher.Parameter{"a": {Type: launcher.TypeDouble}},
			Artifacts:  map[string]launcher.Artifact{"data": {SchemaTitle: "system.Dataset", List: dataList}},
		},
		Outputs: launcher.Outputs{
			Parameters: map[string]launcher.Parameter{"Output": {Type: launcher.TypeDouble}},
			Artifacts:  map[string]launcher.Artifact{"model": {SchemaTitle: "system.Model"}},
		},
		Command: []string{self},
		Args:    []string{"--executor_input", "{{$}}", "--function_to_execute", fn},
	})
	require.NoError(t, err)
	return data
}
