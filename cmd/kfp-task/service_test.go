package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Test documents: a Pipeline, a Run, a RunSchedule and an Experiment of
// namespace team-a, and the Provider team-a/kfp (a provider service).

func testConfig(frameworks ...pipelinesv1beta1.Framework) contract.ProviderConfig {
	return contract.ProviderConfig{
		ContractVersion: contract.Version, Name: "kfp", Namespace: "team-a",
		Spec: pipelinesv1beta1.ProviderSpec{ServiceImage: "ghcr.io/x/kfp-provider-service@sha256:00", ServiceAccount: "kfp",
			Frameworks: frameworks},
		ServiceURL: "http://kfp-svc.team-a.svc:8080",
	}
}

func testResource(kind, name, id, version, spec string) contract.Resource {
	return contract.Resource{
		ContractVersion: contract.Version, APIVersion: "pipelines.kubeflow.org/v1beta1", Kind: kind,
		Metadata: contract.Metadata{Name: name, Namespace: "team-a", UID: "uid-1", Generation: 1},
		Spec:     json.RawMessage(spec),
		Status:   contract.ResourceStatus{Provider: pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: id}},
		Version:  version,
	}
}

const (
	pipelineSpec = `{"provider":"kfp","image":"ghcr.io/x/penguin:0.3.1",` +
		`"env":[{"name":"TRAINING_RUNS","value":"100"},{"name":"EMPTY"}],` +
		`"framework":{"name":"tfx","parameters":{"components":"base_pipeline.create_components","beamArgs":[{"name":"a","value":"b"}]}}}`
	pipelineDef = `{"name":"team-a/penguin","version":"0.3.1-4c2d9e1","image":"ghcr.io/x/penguin:0.3.1",` +
		`"env":[{"name":"TRAINING_RUNS","value":"100"},{"name":"EMPTY","value":""}],` +
		`"framework":{"name":"tfx","parameters":{"beamArgs":[{"name":"a","value":"b"}],"components":"base_pipeline.create_components"}}}`
	compiledYAML = "# compiled by kfp\npipelineInfo:\n  name: penguin\nschemaVersion: 2.1.0\nroot:\n  dag: {}\n"
	compiledJSON = `{"pipelineInfo":{"name":"penguin"},"root":{"dag":{}},"schemaVersion":"2.1.0"}`

	runSpec = `{"provider":"kfp","pipeline":"penguin:0.3.1","experimentName":"penguins",` +
		`"parameters":[{"name":"epochs","value":"10"},{"name":"note","value":""}],` +
		`"artifacts":[{"name":"model","path":"Pusher:pushed_model:0[pushed == 1]"}]}`
	runScheduleSpec = `{"provider":"kfp","pipeline":"penguin","parameters":[{"name":"epochs","value":"10"}],` +
		`"schedule":{"cronExpression":"0 0 * * *","startTime":"2025-01-02T03:04:05Z","endTime":"2026-01-02T03:04:05Z"}}`
)

func pipelineResource(id string) contract.Resource {
	return testResource("Pipeline", "penguin", id, "0.3.1-4c2d9e1", pipelineSpec)
}

func runResource(kind, spec, id string) contract.Resource {
	r := testResource(kind, "nightly", id, "9f8e7d", spec)
	r.Pipeline = &contract.PipelineRef{Name: "penguin", Version: "0.3.1-4c2d9e1", ID: "p-1"}
	return r
}

func ownedBy(r contract.Resource, kind, name string) contract.Resource {
	r.Metadata.Owner = &contract.Owner{Kind: kind, Name: name, UID: "uid-rc"}
	return r
}

func withParameters(r contract.Resource, params ...contract.Parameter) contract.Resource {
	r.Parameters = &params
	return r
}

func withTrigger(r contract.Resource, t contract.TriggerIndicator) contract.Resource {
	r.TriggerIndicator = &t
	return r
}

func TestServiceRequest(t *testing.T) {
	experiment := testResource("Experiment", "penguins", "", "e1", `{"provider":"kfp","description":"Penguin <runs> & \"more\""}`)
	cases := map[string]struct {
		kind, op string
		res      contract.Resource
		compiled string
		method   string
		path     string
		body     string // "" = no body
	}{
		"pipeline create": {kindPipeline, opCreate, pipelineResource(""), compiledYAML, "POST", "/resource/pipeline",
			`{"pipelineDefinition":` + pipelineDef + `,"compiledPipeline":` + compiledJSON + `}`},
		"pipeline update with a JSON compiled pipeline": {kindPipeline, opUpdate, pipelineResource("p-1"), `{"b": [1, 2.5, "<&>"], "a": {}}`, "PUT", "/resource/pipeline/p-1",
			`{"pipelineDefinition":` + pipelineDef + `,"compiledPipeline":{"b":[1,2.5,"<&>"],"a":{}}}`},
		"pipeline delete": {kindPipeline, opDelete, pipelineResource("p-1"), "", "DELETE", "/resource/pipeline/p-1", ""},
		"pipeline create without framework parameters or env": {kindPipeline, opCreate,
			testResource("Pipeline", "bare", "", "v1", `{"provider":"kfp","image":"img","framework":{"name":"kfpsdk"}}`), compiledYAML, "POST", "/resource/pipeline",
			`{"pipelineDefinition":{"name":"team-a/bare","version":"v1","image":"img","framework":{"name":"kfpsdk","parameters":{}}},"compiledPipeline":` + compiledJSON + `}`},

		"run create of a RunConfiguration": {kindRun, opCreate, ownedBy(runResource("Run", runSpec, ""), "RunConfiguration", "nightly-rc"), "", "POST", "/resource/run",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"team-a/nightly-rc","experimentName":"team-a/penguins",` +
				`"parameters":{"epochs":"10","note":""},"artifacts":[{"name":"model","path":"Pusher:pushed_model:0[pushed == 1]"}],"triggerIndicator":{"type":"","source":"","sourceNamespace":""}}`},
		"run create fired by an upstream RunConfiguration": {kindRun, opCreate,
			withTrigger(ownedBy(runResource("Run", `{"provider":"kfp","pipeline":"penguin"}`, ""), "RunConfiguration", "training"),
				contract.TriggerIndicator{Type: "runConfiguration", Source: "examples <&>", SourceNamespace: "team-a"}), "", "POST", "/resource/run",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"team-a/training","experimentName":"",` +
				`"triggerIndicator":{"type":"runConfiguration","source":"examples <&>","sourceNamespace":"team-a"}}`},
		"run create, no owner, experiment, parameters or artifacts": {kindRun, opCreate,
			ownedBy(runResource("Run", `{"provider":"kfp","pipeline":"penguin"}`, ""), "Other", "x"), "", "POST", "/resource/run",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"","experimentName":"","triggerIndicator":{"type":"","source":"","sourceNamespace":""}}`},
		"run create with resolved parameters": {kindRun, opCreate,
			withParameters(runResource("Run", `{"provider":"kfp","pipeline":"penguin","parameters":[{"name":"model","valueFrom":{"runConfigurationRef":{"name":"up","outputArtifact":"m"}}},{"name":"epochs","value":"10"}]}`, ""),
				contract.Parameter{Name: "model", Value: "gs://b/m"}, contract.Parameter{Name: "epochs", Value: "10"}), "", "POST", "/resource/run",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"","experimentName":"","parameters":{"epochs":"10","model":"gs://b/m"},"triggerIndicator":{"type":"","source":"","sourceNamespace":""}}`},
		"run create whose optional parameters were all left out": {kindRun, opCreate,
			withParameters(runResource("Run", `{"provider":"kfp","pipeline":"penguin","parameters":[{"name":"model","valueFrom":{"runConfigurationRef":{"name":"up","outputArtifact":"m","optional":true}}}]}`, "")),
			"", "POST", "/resource/run",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"","experimentName":"","triggerIndicator":{"type":"","source":"","sourceNamespace":""}}`},
		"run update (the service may answer 501)": {kindRun, opUpdate, runResource("Run", runSpec, "r-1"), "", "PUT", "/resource/run/r-1",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"","experimentName":"team-a/penguins",` +
				`"parameters":{"epochs":"10","note":""},"artifacts":[{"name":"model","path":"Pusher:pushed_model:0[pushed == 1]"}],"triggerIndicator":{"type":"","source":"","sourceNamespace":""}}`},
		"run delete": {kindRun, opDelete, runResource("Run", runSpec, "r-1"), "", "DELETE", "/resource/run/r-1", ""},

		"runschedule create": {kindRunSchedule, opCreate, ownedBy(runResource("RunSchedule", runScheduleSpec, ""), "RunConfiguration", "nightly-rc"), "", "POST", "/resource/runschedule",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"team-a/nightly-rc","experimentName":"",` +
				`"schedule":{"cronExpression":"0 0 * * *","startTime":"2025-01-02T03:04:05Z","endTime":"2026-01-02T03:04:05Z"},` +
				`"parameters":{"epochs":"10"},"triggerIndicator":{"type":"schedule","source":"nightly","sourceNamespace":"team-a"}}`},
		"runschedule update without a window": {kindRunSchedule, opUpdate,
			runResource("RunSchedule", `{"provider":"kfp","pipeline":"penguin","experimentName":"e","schedule":{"cronExpression":"@daily"}}`, "rs-1"), "", "PUT", "/resource/runschedule/rs-1",
			`{"name":"team-a/nightly","version":"9f8e7d","pipelineName":"team-a/penguin","pipelineVersion":"0.3.1-4c2d9e1",` +
				`"runConfigurationName":"","experimentName":"team-a/e","schedule":{"cronExpression":"@daily"},"triggerIndicator":{"type":"schedule","source":"nightly","sourceNamespace":"team-a"}}`},
		"runschedule delete": {kindRunSchedule, opDelete, runResource("RunSchedule", runScheduleSpec, "rs-1"), "", "DELETE", "/resource/runschedule/rs-1", ""},

		"experiment create": {kindExperiment, opCreate, experiment, "", "POST", "/resource/experiment",
			`{"name":"team-a/penguins","version":"e1","description":"Penguin <runs> & \"more\""}`},
		"experiment update without a description": {kindExperiment, opUpdate, testResource("Experiment", "penguins", "x-1", "e2", `{"provider":"kfp"}`), "", "PUT", "/resource/experiment/x-1",
			`{"name":"team-a/penguins","version":"e2","description":""}`},
		"experiment delete": {kindExperiment, opDelete, testResource("Experiment", "penguins", "x-1", "e2", `{"provider":"kfp"}`), "", "DELETE", "/resource/experiment/x-1", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			method, path, body, err := serviceRequest(c.kind, c.op, c.res, testConfig(), []byte(c.compiled))
			require.NoError(t, err)
			assert.Equal(t, c.method, method)
			assert.Equal(t, c.path, path)
			if c.body == "" {
				assert.Nil(t, body)
				return
			}
			assert.Equal(t, c.body, string(body), "exact body")
		})
	}
}

func TestServiceRequestRefusals(t *testing.T) {
	noPipeline := runResource("Run", runSpec, "")
	noPipeline.Pipeline = nil
	cases := map[string]struct {
		kind, op string
		res      contract.Resource
		compiled string
		want     string
	}{
		"update without an id":   {kindPipeline, opUpdate, pipelineResource(""), compiledYAML, "cannot update pipeline team-a/penguin: it has no id"},
		"delete without an id":   {kindRun, opDelete, runResource("Run", runSpec, ""), "", "cannot delete run team-a/nightly: it has no id"},
		"unknown operation":      {kindRun, "restart", runResource("Run", runSpec, "r"), "", `unknown operation "restart"`},
		"unknown kind":           {"runconfiguration", opCreate, runResource("Run", runSpec, ""), "", `unknown kind "runconfiguration"`},
		"run without a pipeline": {kindRun, opCreate, noPipeline, "", "did not resolve the pipeline it runs"},
		"unresolved valueFrom": {kindRunSchedule, opCreate,
			runResource("RunSchedule", `{"provider":"kfp","pipeline":"p","parameters":[{"name":"m","valueFrom":{"runConfigurationRef":{"name":"up","outputArtifact":"m"}}}],"schedule":{"cronExpression":"@daily"}}`, ""),
			"", `parameter "m": valueFrom was not resolved`},
		"a spec of the wrong shape": {kindExperiment, opCreate, testResource("Experiment", "e", "", "1", `{"description":5}`), "", "the spec of Experiment team-a/e"},
		"no spec":                   {kindExperiment, opCreate, testResource("Experiment", "e", "", "1", ``), "", "has no spec"},
		"empty compiled pipeline":   {kindPipeline, opCreate, pipelineResource(""), " \n", "the compiled pipeline definition is empty"},
		"several YAML documents": {kindPipeline, opCreate, pipelineResource(""), "a: 1\n---\nplatforms: {}\n",
			"holds 2 YAML documents (e.g. a KFP platform spec after the pipeline spec)"},
		"YAML that is not a mapping": {kindPipeline, opCreate, pipelineResource(""), "- a\n- b\n", "YAML but not a mapping"},
		"JSON that is not an object": {kindPipeline, opCreate, pipelineResource(""), `["a"]`, "JSON but not an object"},
		"neither JSON nor YAML":      {kindPipeline, opCreate, pipelineResource(""), "a: [\n", "neither JSON nor YAML"},
		"YAML without JSON form":     {kindPipeline, opCreate, pipelineResource(""), "a: .inf\n", "cannot be expressed as JSON"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := serviceRequest(c.kind, c.op, c.res, testConfig(), []byte(c.compiled))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestCompiledPipelineSkipsEmptyDocuments(t *testing.T) {
	got, err := compiledObject([]byte("---\n# comment\n---\na: 1\n---\n"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(got))
}

func TestServiceRequestEscapesIDs(t *testing.T) {
	for id, want := range map[string]string{
		"a/b":                  "/resource/experiment/a%2Fb",
		"projects/p/locations": "/resource/experiment/projects%2Fp%2Flocations",
		"with space":           "/resource/experiment/with%20space",
		"ünï/💥":                "/resource/experiment/%C3%BCn%C3%AF%2F%F0%9F%92%A5",
		"q?x#y%2F":             "/resource/experiment/q%3Fx%23y%252F",
		"..":                   "/resource/experiment/%2E%2E",
		".":                    "/resource/experiment/%2E",
		"a..b":                 "/resource/experiment/a..b",
	} {
		_, path, _, err := serviceRequest(kindExperiment, opDelete, testResource("Experiment", "e", id, "1", `{}`), testConfig(), nil)
		require.NoError(t, err)
		assert.Equal(t, want, path, id)
	}
}

func TestPatches(t *testing.T) {
	fw := func(name string, patches ...pipelinesv1beta1.Patch) pipelinesv1beta1.Framework {
		return pipelinesv1beta1.Framework{Name: name, Image: "compiler", Patches: patches}
	}
	jsonPatch := func(p string) pipelinesv1beta1.Patch {
		return pipelinesv1beta1.Patch{Type: pipelinesv1beta1.PatchJSON, Payload: p}
	}
	mergePatch := func(p string) pipelinesv1beta1.Patch {
		return pipelinesv1beta1.Patch{Type: pipelinesv1beta1.PatchMerge, Payload: p}
	}
	definition := func(t *testing.T, cfg contract.ProviderConfig) map[string]any {
		_, _, body, err := serviceRequest(kindPipeline, opCreate, pipelineResource(""), cfg, []byte(compiledYAML))
		require.NoError(t, err)
		var got struct {
			PipelineDefinition map[string]any `json:"pipelineDefinition"`
			CompiledPipeline   map[string]any `json:"compiledPipeline"`
		}
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, "penguin", got.CompiledPipeline["pipelineInfo"].(map[string]any)["name"], "the compiled pipeline is not patched")
		return got.PipelineDefinition
	}
	unpatched := definition(t, testConfig())

	t.Run("json and merge, in order", func(t *testing.T) {
		got := definition(t, testConfig(
			fw("kfpsdk", mergePatch(`{"image":"not-this-framework"}`)),
			fw("tfx",
				jsonPatch(`[{"op":"add","path":"/framework/parameters/beamArgs/-","value":{"name":"project","value":"ml-$$(x)"}}]`),
				mergePatch(`{"image":"ghcr.io/x/penguin:patched","env":null}`),
				jsonPatch(`[{"op":"replace","path":"/image","value":"ghcr.io/x/penguin:patched-twice"}]`)),
		))
		want := map[string]any{}
		raw, _ := json.Marshal(unpatched)
		require.NoError(t, json.Unmarshal(raw, &want))
		want["image"] = "ghcr.io/x/penguin:patched-twice"
		delete(want, "env")
		params := want["framework"].(map[string]any)["parameters"].(map[string]any)
		params["beamArgs"] = append(params["beamArgs"].([]any), map[string]any{"name": "project", "value": "ml-$$(x)"})
		assert.Equal(t, want, got)
	})
	t.Run("patch, kfp-operator's docs' spelling of payload", func(t *testing.T) {
		// The deprecated field is the point: a manifest copied from kfp-operator's docs.
		spelt := pipelinesv1beta1.Patch{Type: pipelinesv1beta1.PatchMerge, Patch: `{"image":"ghcr.io/x/penguin:docs"}`} //nolint:staticcheck // SA1019, on purpose
		got := definition(t, testConfig(fw("tfx", spelt)))
		assert.Equal(t, "ghcr.io/x/penguin:docs", got["image"])
	})
	t.Run("a framework without patches", func(t *testing.T) {
		assert.Equal(t, unpatched, definition(t, testConfig(fw("tfx"))))
	})
	for name, c := range map[string]struct {
		patch pipelinesv1beta1.Patch
		want  string
	}{
		"a failing test":         {jsonPatch(`[{"op":"test","path":"/image","value":"other"}]`), `provider team-a/kfp: framework "tfx" patches[1] (json) does not apply to the pipeline definition`},
		"a missing path":         {jsonPatch(`[{"op":"remove","path":"/nope"}]`), `framework "tfx" patches[1] (json) does not apply`},
		"not a JSON patch":       {jsonPatch(`{"op":"add"}`), `framework "tfx" patches[1] (json): the payload is not an RFC 6902 JSON Patch`},
		"a merge patch, no JSON": {mergePatch(`{`), `framework "tfx" patches[1] (merge): the payload is not an RFC 7386 merge patch`},
		"a merge patch, a list":  {mergePatch(`[1]`), `patches[1] (merge): the payload is not an RFC 7386 merge patch (a JSON object)`},
		"an unknown type":        {pipelinesv1beta1.Patch{Type: "strategic", Payload: `{}`}, `patches[1] (strategic): unknown patch type`},
		"replacing the document": {jsonPatch(`[{"op":"replace","path":"","value":[1]}]`), `patches[1] (json) leaves a pipeline definition that is not a JSON object`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(fw("tfx", mergePatch(`{"image":"fine"}`), c.patch))
			_, _, _, err := serviceRequest(kindPipeline, opCreate, pipelineResource(""), cfg, []byte(compiledYAML))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestOutputOf(t *testing.T) {
	long := strings.Repeat("é", 5000)
	cases := map[string]struct {
		kind, op, id string
		status       int
		body         string
		want         contract.Output
		fails        bool // not an answer of the API's: the step fails
	}{
		"create":                   {kindPipeline, opCreate, "", 201, `{"id":"p-1"}`, contract.Output{ID: "p-1"}, false},
		"create answered 200":      {kindRun, opCreate, "", 200, `{"id":"r-1"}`, contract.Output{ID: "r-1"}, false},
		"update":                   {kindPipeline, opUpdate, "p-1", 200, `{"id":"p-1"}`, contract.Output{ID: "p-1"}, false},
		"update to a new id":       {kindRunSchedule, opUpdate, "rs-1", 200, `{"id":"rs-2"}`, contract.Output{ID: "rs-2"}, false},
		"create without an id":     {kindExperiment, opCreate, "", 201, `{}`, contract.Output{Error: "the provider service answered 201 without an id"}, false},
		"update with an empty id":  {kindExperiment, opUpdate, "x", 200, `{"id":""}`, contract.Output{Error: "the provider service answered 200 without an id"}, false},
		"create answered null":     {kindExperiment, opCreate, "", 201, `null`, contract.Output{Error: "the provider service answered 201 without an id"}, false},
		"create, not JSON":         {kindRun, opCreate, "", 201, "r-1\n", contract.Output{Error: "the provider service answered run create with HTTP 201 and a body that is not the API's JSON: r-1"}, true},
		"create, empty body":       {kindRun, opCreate, "", 201, "", contract.Output{Error: "the provider service answered run create with HTTP 201 and a body that is not the API's JSON: (empty body)"}, true},
		"success with an error":    {kindRun, opCreate, "", 201, `{"id":"r","providerError":"half"}`, contract.Output{ID: "r", Error: "half"}, false},
		"delete":                   {kindPipeline, opDelete, "p-1", 200, `{}`, contract.Output{ID: "p-1"}, false},
		"delete answered 204":      {kindRun, opDelete, "r-1", 204, ``, contract.Output{ID: "r-1"}, false},
		"delete, body not JSON":    {kindRun, opDelete, "r-1", 200, `deleted`, contract.Output{ID: "r-1"}, false},
		"delete with an error":     {kindRun, opDelete, "r-1", 200, `{"providerError":"odd"}`, contract.Output{Error: "odd"}, false},
		"400":                      {kindRun, opCreate, "", 400, `{"providerError":"parameter \"x\" is not declared"}`, contract.Output{Error: `parameter "x" is not declared`}, false},
		"500 of an update":         {kindPipeline, opUpdate, "p-1", 500, `{"id":"p-1","providerError":"backend down"}`, contract.Output{Error: "backend down"}, false},
		"500 of a delete":          {kindPipeline, opDelete, "p-1", 500, `{"id":"p-1","providerError":"cannot delete"}`, contract.Output{Error: "cannot delete"}, false},
		"500, not JSON":            {kindRun, opCreate, "", 500, "  Failed to read request body\n", contract.Output{Error: "Failed to read request body"}, false},
		"500, JSON without words":  {kindRun, opCreate, "", 500, `{"id":""}`, contract.Output{Error: `{"id":""}`}, false},
		"400, empty":               {kindRun, opCreate, "", 400, "", contract.Output{Error: "the provider service answered run create with HTTP 400 and no message"}, false},
		"500, long text":           {kindRun, opCreate, "", 500, long, contract.Output{Error: strings.Repeat("é", 2048) + " …(truncated)"}, false},
		"501":                      {kindRun, opUpdate, "r-1", 501, `{"id":"r-1","providerError":"not implemented"}`, contract.Output{Error: "run update is not supported by this provider service (HTTP 501): not implemented"}, false},
		"501, not JSON":            {kindRun, opUpdate, "r-1", 501, "Not Implemented", contract.Output{Error: "run update is not supported by this provider service (HTTP 501): Not Implemented"}, false},
		"404":                      {kindRun, opCreate, "", 404, "404 page not found\n", contract.Output{Error: "the provider service answered run create with HTTP 404: 404 page not found"}, true},
		"503 of a proxy":           {kindPipeline, opDelete, "p", 503, "<html>upstream connect error</html>", contract.Output{Error: "the provider service answered pipeline delete with HTTP 503: <html>upstream connect error</html>"}, true},
		"302":                      {kindRun, opCreate, "", 302, "", contract.Output{Error: "the provider service answered run create with HTTP 302: (empty body)"}, true},
		"invalid UTF-8 is cleaned": {kindRun, opCreate, "", 400, "bad \xff byte", contract.Output{Error: "bad \uFFFD byte"}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := outputOf(c.kind, c.op, c.id, c.status, []byte(c.body))
			assert.Equal(t, c.want, got)
			if c.fails {
				require.Error(t, err)
				assert.Equal(t, c.want.Error, err.Error())
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// serviceFiles writes the inputs of a provider step into a directory and
// returns the step's arguments after KIND OPERATION, and where the output
// goes.
func serviceFiles(t *testing.T, cfg contract.ProviderConfig, res contract.Resource, compiled string) (args []string, output string) {
	t.Helper()
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	write := func(name string, v any) {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p(name), data, 0o644))
	}
	write("config.json", cfg)
	write("resource.json", res)
	args = []string{"--provider-config", p("config.json"), "--resource", p("resource.json"), "--output", p("output.json")}
	if compiled != "" {
		require.NoError(t, os.WriteFile(p("pipeline.yaml"), []byte(compiled), 0o444))
		args = append(args, "--pipeline-definition", p("pipeline.yaml"))
	}
	return args, p("output.json")
}

func readOutputFile(t *testing.T, path string) contract.Output {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out contract.Output
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	return out
}

// A user's bytes reach the service unchanged: the service decodes exactly
// what the user wrote.
var userBytes = []string{
	"pa$$word", "$(params.x)", "$(context.taskRun.name)", `"quoted" 'single'`, "line1\nline2\r\n\ttab",
	"ünïcödé 🚀 \u2028\u2029", `<script>&amp;</script>`, `back\slash \u0041`, "", " leading and trailing ",
	"{{inputs.parameters.x}}", "${HOME}", "%2F%20",
}

func TestServiceCommandEndToEnd(t *testing.T) {
	type seen struct {
		method, path, rawID, contentType string
		body                             []byte
	}
	var got seen
	status, answer := 201, `{"id":"run/with slash"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = seen{method: r.Method, path: r.URL.Path, rawID: r.URL.EscapedPath(), contentType: r.Header.Get("Content-Type"), body: body}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	cfg := testConfig()
	cfg.ServiceURL = srv.URL + "/"

	params := []contract.Parameter{}
	specParams := []map[string]string{}
	for i, v := range userBytes {
		name := "p" + string(rune('a'+i))
		params = append(params, contract.Parameter{Name: name, Value: v})
		specParams = append(specParams, map[string]string{"name": name, "value": v})
	}
	spec, err := json.Marshal(map[string]any{"provider": "kfp", "pipeline": "penguin", "experimentName": "e",
		"parameters": specParams, "artifacts": []map[string]string{{"name": "m", "path": `C:o:0[name == "$$x\n"]`}}})
	require.NoError(t, err)

	t.Run("run create", func(t *testing.T) {
		args, output := serviceFiles(t, cfg, runResource("Run", string(spec), ""), "")
		require.NoError(t, run(append([]string{"run", "create"}, args...), os.Getenv))
		assert.Equal(t, contract.Output{ID: "run/with slash"}, readOutputFile(t, output))
		assert.Equal(t, "POST", got.method)
		assert.Equal(t, "/resource/run", got.path)
		assert.Equal(t, "application/json", got.contentType)
		var def struct {
			Name       string            `json:"name"`
			Parameters map[string]string `json:"parameters"`
			Artifacts  []artifactDef     `json:"artifacts"`
		}
		require.NoError(t, json.Unmarshal(got.body, &def))
		assert.Equal(t, "team-a/nightly", def.Name)
		require.Len(t, def.Parameters, len(userBytes))
		for _, p := range params {
			assert.Equal(t, p.Value, def.Parameters[p.Name], "parameter %s", p.Name)
		}
		assert.Equal(t, []artifactDef{{Name: "m", Path: `C:o:0[name == "$$x\n"]`}}, def.Artifacts)
	})
	t.Run("resolved parameters", func(t *testing.T) {
		args, output := serviceFiles(t, cfg, withParameters(runResource("Run", string(spec), ""), params...), "")
		require.NoError(t, run(append([]string{"run", "create"}, args...), os.Getenv))
		assert.Equal(t, contract.Output{ID: "run/with slash"}, readOutputFile(t, output))
		var def struct {
			Parameters map[string]string `json:"parameters"`
		}
		require.NoError(t, json.Unmarshal(got.body, &def))
		for _, p := range params {
			assert.Equal(t, p.Value, def.Parameters[p.Name], "parameter %s", p.Name)
		}
	})
	t.Run("pipeline update with patches", func(t *testing.T) {
		status, answer = 200, `{"id":"p/1 ü"}`
		params := map[string]any{}
		for i, v := range userBytes {
			params["k"+string(rune('a'+i))] = v
		}
		pspec, err := json.Marshal(map[string]any{"provider": "kfp", "image": "img:1",
			"env":       []map[string]string{{"name": "E", "value": "$(E) $$ \"x\"\n"}},
			"framework": map[string]any{"name": "tfx", "parameters": params}})
		require.NoError(t, err)
		cfg := cfg
		cfg.Spec.Frameworks = []pipelinesv1beta1.Framework{{Name: "tfx", Image: "c", Patches: []pipelinesv1beta1.Patch{
			{Type: pipelinesv1beta1.PatchJSON, Payload: `[{"op":"add","path":"/framework/parameters/beamArgs","value":["--x=$$(y)"]}]`}}}}
		args, output := serviceFiles(t, cfg, testResource("Pipeline", "penguin", "p/1 ü", "v2", string(pspec)), compiledYAML)
		require.NoError(t, run(append([]string{"pipeline", "update"}, args...), os.Getenv))
		assert.Equal(t, contract.Output{ID: "p/1 ü"}, readOutputFile(t, output))
		assert.Equal(t, "PUT", got.method)
		assert.Equal(t, "/resource/pipeline/p%2F1%20%C3%BC", got.rawID)
		id, err := url.PathUnescape(strings.TrimPrefix(got.rawID, "/resource/pipeline/"))
		require.NoError(t, err)
		assert.Equal(t, "p/1 ü", id, "the service decodes the id the resource holds")
		var body struct {
			PipelineDefinition struct {
				Env       []namedValue `json:"env"`
				Framework struct {
					Parameters map[string]any `json:"parameters"`
				} `json:"framework"`
			} `json:"pipelineDefinition"`
			CompiledPipeline map[string]any `json:"compiledPipeline"`
		}
		require.NoError(t, json.Unmarshal(got.body, &body))
		assert.Equal(t, []namedValue{{Name: "E", Value: "$(E) $$ \"x\"\n"}}, body.PipelineDefinition.Env)
		want := map[string]any{"beamArgs": []any{"--x=$$(y)"}}
		for k, v := range params {
			want[k] = v
		}
		assert.Equal(t, want, body.PipelineDefinition.Framework.Parameters)
		assert.Equal(t, "2.1.0", body.CompiledPipeline["schemaVersion"])
	})
	t.Run("delete reports the id deleted", func(t *testing.T) {
		status, answer = 200, `{}`
		args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "x 1", "1", `{}`), "")
		require.NoError(t, run(append([]string{"experiment", "delete"}, args...), os.Getenv))
		assert.Equal(t, contract.Output{ID: "x 1"}, readOutputFile(t, output))
		assert.Equal(t, "DELETE", got.method)
		assert.Empty(t, got.body)
		assert.Empty(t, got.contentType)
	})
	t.Run("the service's error", func(t *testing.T) {
		status, answer = 400, `{"providerError":"experiment \"e\" exists with another description"}`
		args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "", "1", `{}`), "")
		require.NoError(t, run(append([]string{"experiment", "create"}, args...), os.Getenv), "a reported error exits 0")
		assert.Equal(t, contract.Output{Error: `experiment "e" exists with another description`}, readOutputFile(t, output))
	})
	t.Run("not an answer of the API", func(t *testing.T) {
		status, answer = 404, "404 page not found"
		args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "", "1", `{}`), "")
		err := run(append([]string{"experiment", "create"}, args...), os.Getenv)
		require.Error(t, err)
		assert.Equal(t, contract.Output{Error: "the provider service answered experiment create with HTTP 404: 404 page not found"}, readOutputFile(t, output))
	})
}

func TestServiceCommandRefusesWithoutCalling(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	cfg := testConfig()
	cfg.ServiceURL = srv.URL
	notService := testConfig()
	notService.ServiceURL = ""
	oldResource := pipelineResource("")
	oldResource.ContractVersion = "v0"
	cases := map[string]struct {
		cfg      contract.ProviderConfig
		res      contract.Resource
		compiled string
		args     []string
		want     string
	}{
		"not a provider service": {notService, pipelineResource(""), compiledYAML, []string{"pipeline", "create"},
			"provider team-a/kfp is not a provider service: its provider config has no serviceURL"},
		"a serviceURL that is no URL": {func() contract.ProviderConfig { c := cfg; c.ServiceURL = "kfp-svc:8080"; return c }(),
			pipelineResource(""), compiledYAML, []string{"pipeline", "create"}, `serviceURL "kfp-svc:8080" is not an http(s) URL`},
		"an unknown contractVersion": {cfg, oldResource, compiledYAML, []string{"pipeline", "create"},
			`the resource has contractVersion "v0", but this provider understands only contractVersion v1`},
		"no compiled pipeline": {cfg, pipelineResource(""), "", []string{"pipeline", "create"}, "pipeline create needs --pipeline-definition"},
		"an update without id": {cfg, pipelineResource(""), compiledYAML, []string{"pipeline", "update"}, "it has no id"},
		"an unknown operation": {cfg, pipelineResource(""), compiledYAML, []string{"pipeline", "upsert"}, `unknown operation "upsert"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			args, output := serviceFiles(t, c.cfg, c.res, c.compiled)
			require.NoError(t, run(append(c.args, args...), os.Getenv))
			assert.Contains(t, readOutputFile(t, output).Error, c.want)
		})
	}
	t.Run("missing input files", func(t *testing.T) {
		output := filepath.Join(t.TempDir(), "output.json")
		require.NoError(t, run([]string{"run", "delete", "--provider-config", "/nonexistent/config.json", "--resource", "/nonexistent/r.json", "--output", output}, os.Getenv))
		assert.Contains(t, readOutputFile(t, output).Error, "--provider-config: open /nonexistent/config.json")
	})
	assert.Zero(t, calls.Load(), "nothing was sent")

	assert.ErrorContains(t, run([]string{"pipeline"}, os.Getenv), "usage: kfp-task pipeline create|update|delete")
	assert.ErrorContains(t, run([]string{"run", "--output", "x"}, os.Getenv), "usage")
	assert.ErrorContains(t, run([]string{"run", "create"}, os.Getenv), "--output is required")
}

func testClient(timeout time.Duration) *serviceClient {
	c := newServiceClient()
	c.retryDelay = 300 * time.Millisecond
	c.timeout = func(string, string) time.Duration { return timeout }
	c.log = io.Discard
	return c
}

// freeAddress is a local address nothing listens on (a connection is
// refused).
func freeAddress(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestServiceUnreachable(t *testing.T) {
	cfg := testConfig()
	cfg.ServiceURL = "http://" + freeAddress(t)
	args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "", "1", `{}`), "")
	start := time.Now()
	err := testClient(10*time.Second).run(kindExperiment, append([]string{"create"}, args...))
	require.Error(t, err, "no verdict: the step fails")
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "retried once after the delay")
	assert.Contains(t, err.Error(), "cannot reach the provider service (POST "+cfg.ServiceURL+"/resource/experiment)")
	assert.Contains(t, err.Error(), "connection refused")
	assert.Equal(t, err.Error(), readOutputFile(t, output).Error, "the reason reaches the resource too")
}

func TestServiceRetriesARefusedConnectionOnce(t *testing.T) {
	addr := freeAddress(t)
	cfg := testConfig()
	cfg.ServiceURL = "http://" + addr
	var calls atomic.Int32
	started := make(chan struct{})
	go func() {
		defer close(started)
		time.Sleep(50 * time.Millisecond) // after the first, refused, attempt
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"x-1"}`)
		})}
		t.Cleanup(func() { _ = srv.Close() })
		go func() { _ = srv.Serve(ln) }()
	}()
	args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "", "1", `{}`), "")
	require.NoError(t, testClient(10*time.Second).run(kindExperiment, append([]string{"create"}, args...)))
	<-started
	assert.Equal(t, contract.Output{ID: "x-1"}, readOutputFile(t, output))
	assert.Equal(t, int32(1), calls.Load())
}

func TestServiceTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	cfg := testConfig()
	cfg.ServiceURL = srv.URL
	args, output := serviceFiles(t, cfg, pipelineResource(""), compiledYAML)
	err := testClient(200*time.Millisecond).run(kindPipeline, append([]string{"create"}, args...))
	require.Error(t, err)
	assert.Equal(t, "the provider service did not answer POST "+srv.URL+"/resource/pipeline within 200ms", err.Error())
	assert.Equal(t, err.Error(), readOutputFile(t, output).Error)
}

func TestServiceTimeouts(t *testing.T) {
	c := newServiceClient()
	assert.Equal(t, compileTimeout, c.timeout(kindPipeline, opCreate))
	assert.Equal(t, compileTimeout, c.timeout(kindPipeline, opUpdate))
	assert.Equal(t, serviceTimeout, c.timeout(kindPipeline, opDelete))
	assert.Equal(t, serviceTimeout, c.timeout(kindRun, opCreate))
}

func TestServiceDoesNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	cfg := testConfig()
	cfg.ServiceURL = srv.URL
	args, output := serviceFiles(t, cfg, testResource("Experiment", "e", "", "1", `{}`), "")
	err := testClient(10*time.Second).run(kindExperiment, append([]string{"create"}, args...))
	require.Error(t, err)
	assert.Contains(t, readOutputFile(t, output).Error, "HTTP 307")
	assert.Zero(t, elsewhere.Load())
}

func TestServiceSendsEscapedIDsAsWritten(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	cfg := testConfig()
	cfg.ServiceURL = srv.URL
	ids := []string{"..", "a/b", "with space", "ünï/💥", "q?x#y%2F"}
	for _, id := range ids {
		args, output := serviceFiles(t, cfg, testResource("Run", "r", id, "1", `{}`), "")
		require.NoError(t, testClient(10*time.Second).run(kindRun, append([]string{"delete"}, args...)))
		assert.Equal(t, contract.Output{ID: id}, readOutputFile(t, output))
	}
	require.Len(t, paths, len(ids))
	for i, id := range ids {
		got, err := url.PathUnescape(strings.TrimPrefix(paths[i], "/resource/run/"))
		require.NoError(t, err)
		assert.Equal(t, id, got, "the service decodes %q", paths[i])
	}
}
