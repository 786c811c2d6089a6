package main

// The provider-service client: for a Provider with spec.serviceImage, the
// shared Tasks' provider step runs this binary as the provider,
//
//	kfp-task KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]
//
// and it calls the provider service (kfp-operator's provider-service HTTP
// API, v1beta1 resources, master after v0.7.0) at the provider config's
// serviceURL, then writes the service's answer to --output as a CLI
// provider would. serviceRequest and outputOf hold every decision; the rest
// is I/O.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"
	yamlv3 "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// The kinds (the API's resource types) and operations a provider step runs.
const (
	kindPipeline    = "pipeline"
	kindRun         = "run"
	kindRunSchedule = "runschedule"
	kindExperiment  = "experiment"

	opCreate = "create"
	opUpdate = "update"
	opDelete = "delete"
)

func isServiceKind(kind string) bool {
	switch kind {
	case kindPipeline, kindRun, kindRunSchedule, kindExperiment:
		return true
	}
	return false
}

// Limits of the client.
const (
	// compileTimeout bounds a pipeline create or update (the service may
	// upload a large definition); serviceTimeout every other call. Each
	// covers the retry too.
	compileTimeout = 5 * time.Minute
	serviceTimeout = 2 * time.Minute
	// maxServiceAnswer is how much of an answer is read; an id or an error
	// is far smaller.
	maxServiceAnswer = 1 << 20
	// maxQuotedBody is how much of an unexpected answer an error quotes.
	maxQuotedBody = 4 << 10
)

// serviceRequest is the call that performs op on kind for res: the HTTP
// method, the path below the service URL, and the JSON body (nil for a
// delete). compiled is the compiled pipeline file (pipeline create and
// update). An error says, in words a user can act on, why no call can be
// made; it is the operation's outcome.
func serviceRequest(kind, op string, res contract.Resource, cfg contract.ProviderConfig, compiled []byte) (method, path string, body []byte, err error) {
	if !isServiceKind(kind) {
		return "", "", nil, fmt.Errorf("unknown kind %q (want pipeline, run, runschedule or experiment)", kind)
	}
	collection := "/resource/" + kind
	id := res.Status.Provider.ID
	switch op {
	case opCreate:
		method, path = http.MethodPost, collection
	case opUpdate, opDelete:
		if id == "" {
			return "", "", nil, fmt.Errorf("cannot %s %s %s/%s: it has no id in the provider's backend (status.provider.id is empty)",
				op, kind, res.Metadata.Namespace, res.Metadata.Name)
		}
		method, path = http.MethodPut, collection+"/"+escapeID(id)
		if op == opDelete {
			return http.MethodDelete, path, nil, nil
		}
	default:
		return "", "", nil, fmt.Errorf("unknown operation %q (want create, update or delete)", op)
	}
	switch kind {
	case kindPipeline:
		body, err = pipelineBody(res, cfg, compiled)
	case kindExperiment:
		body, err = experimentBody(res)
	default:
		body, err = runBody(kind, res)
	}
	if err != nil {
		return "", "", nil, err
	}
	return method, path, body, nil
}

// escapeID is id as one path segment: url.PathEscape, and a segment of
// dots ("." or "..", which a router could take for a relative path) with
// its dots escaped too.
func escapeID(id string) string {
	if strings.Trim(id, ".") == "" {
		return strings.Repeat("%2E", len(id))
	}
	return url.PathEscape(id)
}

// namespaced is a name in the API's NamespacedName form, "namespace/name";
// empty when name is.
func namespaced(namespace, name string) string {
	if name == "" {
		return ""
	}
	return namespace + "/" + name
}

// namedValue is the API's NamedValue: both fields, always.
type namedValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// pipelineDefinition is the API's PipelineDefinition.
type pipelineDefinition struct {
	Name      string       `json:"name"`
	Version   string       `json:"version"`
	Image     string       `json:"image"`
	Env       []namedValue `json:"env,omitempty"`
	Framework struct {
		Name       string                          `json:"name"`
		Parameters map[string]apiextensionsv1.JSON `json:"parameters"`
	} `json:"framework"`
}

// pipelineBody is {"pipelineDefinition": …, "compiledPipeline": …}: the
// definition with the framework's patches applied, and the compiled
// pipeline as a JSON object.
func pipelineBody(res contract.Resource, cfg contract.ProviderConfig, compiled []byte) ([]byte, error) {
	var spec pipelinesv1beta1.PipelineSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	var def pipelineDefinition
	def.Name = namespaced(res.Metadata.Namespace, res.Metadata.Name)
	def.Version = res.Version
	def.Image = spec.Image
	for _, e := range spec.Env {
		def.Env = append(def.Env, namedValue(e))
	}
	def.Framework.Name = spec.Framework.Name
	def.Framework.Parameters = spec.Framework.Parameters
	if def.Framework.Parameters == nil {
		// An object, so that a patch may add to /framework/parameters.
		def.Framework.Parameters = map[string]apiextensionsv1.JSON{}
	}
	defJSON, err := marshalJSON(def)
	if err != nil {
		return nil, err
	}
	if defJSON, err = applyPatches(defJSON, cfg, spec.Framework.Name); err != nil {
		return nil, err
	}
	object, err := compiledObject(compiled)
	if err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		PipelineDefinition json.RawMessage `json:"pipelineDefinition"`
		CompiledPipeline   json.RawMessage `json:"compiledPipeline"`
	}{defJSON, object})
}

// applyPatches applies, in order, the patches of the Provider's framework
// name to the pipeline definition def.
func applyPatches(def []byte, cfg contract.ProviderConfig, name string) ([]byte, error) {
	var patches []pipelinesv1beta1.Patch
	for _, f := range cfg.Spec.Frameworks {
		if f.Name == name {
			patches = f.Patches
		}
	}
	for i, p := range patches {
		where := fmt.Sprintf("provider %s/%s: framework %q patches[%d] (%s)", cfg.Namespace, cfg.Name, name, i, p.Type)
		var err error
		switch p.Type {
		case pipelinesv1beta1.PatchJSON:
			var patch jsonpatch.Patch
			if patch, err = jsonpatch.DecodePatch([]byte(p.Document())); err != nil {
				return nil, fmt.Errorf("%s: the payload is not an RFC 6902 JSON Patch (a JSON list of operations): %v", where, err)
			}
			def, err = patch.Apply(def)
		case pipelinesv1beta1.PatchMerge:
			if !isJSONObject([]byte(p.Document())) {
				return nil, fmt.Errorf("%s: the payload is not an RFC 7386 merge patch (a JSON object)", where)
			}
			def, err = jsonpatch.MergePatch(def, []byte(p.Document()))
		default:
			return nil, fmt.Errorf("%s: unknown patch type (want json or merge)", where)
		}
		if err != nil {
			return nil, fmt.Errorf("%s does not apply to the pipeline definition: %v", where, err)
		}
		if !isJSONObject(def) {
			return nil, fmt.Errorf("%s leaves a pipeline definition that is not a JSON object", where)
		}
	}
	return def, nil
}

func isJSONObject(data []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(data, &m) == nil && m != nil
}

// compiledObject is the compiled pipeline file (YAML or JSON) as a JSON
// object, the form kfp-operator's services read. A file of several YAML
// documents (e.g. a KFP platform spec after the pipeline spec) has no such
// form, and is refused rather than cut.
func compiledObject(compiled []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(compiled)) == 0 {
		return nil, errors.New("the compiled pipeline definition is empty")
	}
	if json.Valid(compiled) {
		if !isJSONObject(compiled) {
			return nil, errors.New("the compiled pipeline definition is JSON but not an object")
		}
		return compiled, nil
	}
	var docs []any
	dec := yamlv3.NewDecoder(bytes.NewReader(compiled))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the compiled pipeline definition is neither JSON nor YAML: %v", err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, errors.New("the compiled pipeline definition holds no YAML document")
	case len(docs) > 1:
		return nil, fmt.Errorf("the compiled pipeline definition holds %d YAML documents (e.g. a KFP platform spec after the pipeline spec); "+
			"the provider-service API takes compiledPipeline as one JSON object, so only a single-document definition can be sent", len(docs))
	}
	if _, ok := docs[0].(map[string]any); !ok {
		return nil, errors.New("the compiled pipeline definition is YAML but not a mapping with string keys")
	}
	object, err := marshalJSON(docs[0])
	if err != nil {
		return nil, fmt.Errorf("the compiled pipeline definition cannot be expressed as JSON: %v", err)
	}
	return object, nil
}

// experimentBody is the API's ExperimentDefinition.
func experimentBody(res contract.Resource) ([]byte, error) {
	var spec pipelinesv1beta1.ExperimentSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}{namespaced(res.Metadata.Namespace, res.Metadata.Name), res.Version, spec.Description})
}

// runDefinition is the API's RunDefinition, and with Schedule its
// RunScheduleDefinition.
type runDefinition struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	PipelineName         string            `json:"pipelineName"`
	PipelineVersion      string            `json:"pipelineVersion"`
	RunConfigurationName string            `json:"runConfigurationName"`
	ExperimentName       string            `json:"experimentName"`
	Schedule             *scheduleDef      `json:"schedule,omitempty"`
	Parameters           map[string]string `json:"parameters,omitempty"`
	Artifacts            []artifactDef     `json:"artifacts,omitempty"`
	// TriggerIndicator is sent as kfp-operator sends it: always for a
	// runschedule, and for a run (all empty for one made by hand).
	TriggerIndicator *contract.TriggerIndicator `json:"triggerIndicator,omitempty"`
}

type scheduleDef struct {
	CronExpression string       `json:"cronExpression"`
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	EndTime        *metav1.Time `json:"endTime,omitempty"`
}

type artifactDef struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// runBody is the definition of a Run or a RunSchedule (kind).
func runBody(kind string, res contract.Resource) ([]byte, error) {
	var spec pipelinesv1beta1.RunScheduleSpec // a Run's spec is its RunSpec
	if err := decodeSpec(res, &spec); err != nil {
		return nil, err
	}
	if res.Pipeline == nil || res.Pipeline.Name == "" {
		return nil, fmt.Errorf("%s %s/%s: the operator did not resolve the pipeline it runs (resource.pipeline is absent)",
			kind, res.Metadata.Namespace, res.Metadata.Name)
	}
	def := runDefinition{
		Name:             namespaced(res.Metadata.Namespace, res.Metadata.Name),
		Version:          res.Version,
		PipelineName:     namespaced(res.Metadata.Namespace, res.Pipeline.Name),
		PipelineVersion:  res.Pipeline.Version,
		ExperimentName:   namespaced(res.Metadata.Namespace, spec.ExperimentName),
		TriggerIndicator: res.TriggerIndicator,
	}
	if def.TriggerIndicator == nil {
		// A resource JSON from before the field: its kind's indicator.
		def.TriggerIndicator = contract.TriggerOf(res.Kind, res.Metadata.Namespace, res.Metadata.Name, nil)
	}
	if o := res.Metadata.Owner; o != nil && o.Kind == "RunConfiguration" {
		def.RunConfigurationName = namespaced(res.Metadata.Namespace, o.Name)
	}
	if kind == kindRunSchedule {
		def.Schedule = &scheduleDef{CronExpression: spec.Schedule.CronExpression,
			StartTime: spec.Schedule.StartTime, EndTime: spec.Schedule.EndTime}
	}
	params, err := contract.RunParameters(res, spec.Parameters)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		def.Parameters = map[string]string{}
		for _, p := range params {
			def.Parameters[p.Name] = p.Value
		}
	}
	for _, a := range spec.Artifacts {
		def.Artifacts = append(def.Artifacts, artifactDef(a))
	}
	return marshalJSON(def)
}

func decodeSpec(res contract.Resource, into any) error {
	if len(res.Spec) == 0 {
		return fmt.Errorf("the resource %s/%s has no spec", res.Metadata.Namespace, res.Metadata.Name)
	}
	if err := json.Unmarshal(res.Spec, into); err != nil {
		return fmt.Errorf("the spec of %s %s/%s: %v", res.Kind, res.Metadata.Namespace, res.Metadata.Name, err)
	}
	return nil
}

// marshalJSON is v as compact JSON, without HTML escapes.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// serviceAnswer is the API's ResponseBody.
type serviceAnswer struct {
	ID            string `json:"id"`
	ProviderError string `json:"providerError"`
}

// outputOf is what the service's answer (HTTP status and body) to op on
// kind amounts to, as a provider's output; id is the backend id the call
// named (a delete's success reports it: the id deleted). The service's
// own words reach the output unchanged. An error means the answer is not
// one of the API's (a proxy's page, a redirect, a malformed success): the
// output then says so too, and the step fails without a verdict of the
// service's.
func outputOf(kind, op, id string, status int, body []byte) (contract.Output, error) {
	var answer serviceAnswer
	isAnswer := json.Unmarshal(body, &answer) == nil
	words := answer.ProviderError
	if words == "" {
		words = quoteBody(body)
	}
	switch {
	case status >= 200 && status < 300 && op == opDelete:
		if isAnswer && answer.ProviderError != "" {
			return contract.Output{Error: answer.ProviderError}, nil
		}
		return contract.Output{ID: id}, nil
	case status >= 200 && status < 300:
		switch {
		case !isAnswer:
			err := fmt.Errorf("the provider service answered %s %s with HTTP %d and a body that is not the API's JSON: %s", kind, op, status, quoteOrEmpty(body))
			return contract.Output{Error: err.Error()}, err
		case answer.ProviderError != "":
			return contract.Output{ID: answer.ID, Error: answer.ProviderError}, nil
		case answer.ID == "":
			return contract.Output{Error: fmt.Sprintf("the provider service answered %d without an id", status)}, nil
		}
		return contract.Output{ID: answer.ID}, nil
	case status == http.StatusBadRequest || status == http.StatusInternalServerError:
		if words == "" {
			words = fmt.Sprintf("the provider service answered %s %s with HTTP %d and no message", kind, op, status)
		}
		return contract.Output{Error: words}, nil
	case status == http.StatusNotImplemented:
		return contract.Output{Error: fmt.Sprintf("%s %s is not supported by this provider service (HTTP 501): %s", kind, op, words)}, nil
	}
	err := fmt.Errorf("the provider service answered %s %s with HTTP %d: %s", kind, op, status, quoteOrEmpty(body))
	return contract.Output{Error: err.Error()}, err
}

// quoteBody is an answer's text, trimmed, cut to maxQuotedBody bytes of
// valid UTF-8.
func quoteBody(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > maxQuotedBody {
		cut := maxQuotedBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + " …(truncated)"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func quoteOrEmpty(body []byte) string {
	if q := quoteBody(body); q != "" {
		return q
	}
	return "(empty body)"
}

// serviceClient performs the calls.
type serviceClient struct {
	client     *http.Client
	retryDelay time.Duration                       // before the one retry of a refused connection
	timeout    func(kind, op string) time.Duration // of the whole call, retry included
	log        io.Writer
}

func newServiceClient() *serviceClient {
	return &serviceClient{
		client: &http.Client{
			Transport: inClusterTransport(nil),
			// A redirect is no answer of the API's; report it as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		retryDelay: 2 * time.Second,
		timeout: func(kind, op string) time.Duration {
			if kind == kindPipeline && op != opDelete {
				return compileTimeout
			}
			return serviceTimeout
		},
		log: os.Stderr,
	}
}

// serviceCmd runs KIND OPERATION against the provider service.
func serviceCmd(kind string, args []string) error {
	return newServiceClient().run(kind, args)
}

func (c *serviceClient) run(kind string, args []string) error {
	usage := fmt.Sprintf("usage: kfp-task %s create|update|delete --provider-config FILE --resource FILE --output FILE [--pipeline-definition FILE]", kind)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New(usage)
	}
	op := args[0]
	fs := flag.NewFlagSet(kind+" "+op, flag.ContinueOnError)
	configPath := fs.String("provider-config", "", "the provider config (JSON)")
	resourcePath := fs.String("resource", "", "the resource (JSON)")
	outputPath := fs.String("output", "", "where to write the outcome")
	definitionPath := fs.String("pipeline-definition", "", "the compiled pipeline (pipeline create and update)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *outputPath == "" {
		return errors.New("--output is required; " + usage)
	}
	out, callErr := c.call(kind, op, *configPath, *resourcePath, *definitionPath)
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*outputPath, data, 0o644); err != nil {
		return fmt.Errorf("writing the outcome: %w", err)
	}
	if callErr != nil {
		return callErr
	}
	if out.Error != "" {
		fmt.Fprintf(c.log, "kfp-task: %s %s failed: %s\n", kind, op, out.Error)
	}
	return nil
}

// call reads the inputs, calls the service and returns the outcome. An
// error means the service gave no verdict (unreachable, or an answer not
// of the API): the output says why too, and the step fails.
func (c *serviceClient) call(kind, op, configPath, resourcePath, definitionPath string) (contract.Output, error) {
	failed := func(format string, a ...any) (contract.Output, error) {
		return contract.Output{Error: fmt.Sprintf(format, a...)}, nil
	}
	if !isServiceKind(kind) {
		return failed("unknown kind %q (want pipeline, run, runschedule or experiment)", kind)
	}
	var cfg contract.ProviderConfig
	if err := readJSON(configPath, "--provider-config", &cfg); err != nil {
		return failed("%v", err)
	}
	var res contract.Resource
	if err := readJSON(resourcePath, "--resource", &res); err != nil {
		return failed("%v", err)
	}
	if err := contract.CheckVersion("provider", "provider-config", cfg.ContractVersion); err != nil {
		return failed("%v", err)
	}
	if err := contract.CheckVersion("provider", "resource", res.ContractVersion); err != nil {
		return failed("%v", err)
	}
	base, err := serviceBase(cfg)
	if err != nil {
		return failed("%v", err)
	}
	var compiled []byte
	if kind == kindPipeline && op != opDelete {
		if definitionPath == "" {
			return failed("pipeline %s needs --pipeline-definition (the compiled pipeline)", op)
		}
		if compiled, err = os.ReadFile(definitionPath); err != nil {
			return failed("reading the compiled pipeline definition: %v", err)
		}
	}
	method, path, body, err := serviceRequest(kind, op, res, cfg, compiled)
	if err != nil {
		return failed("%v", err)
	}
	target := base + path
	timeout := c.timeout(kind, op)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	status, answer, err := c.send(ctx, method, target, body)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the provider service did not answer %s %s within %s", method, target, timeout)
		} else {
			err = fmt.Errorf("cannot reach the provider service (%s %s): %v", method, target, err)
		}
		return contract.Output{Error: err.Error()}, err
	}
	fmt.Fprintf(c.log, "kfp-task: %s %s: HTTP %d in %s\n", method, target, status, time.Since(start).Round(time.Millisecond))
	return outputOf(kind, op, res.Status.Provider.ID, status, answer)
}

// serviceBase is the provider service's URL, without a trailing slash.
func serviceBase(cfg contract.ProviderConfig) (string, error) {
	if cfg.ServiceURL == "" {
		return "", fmt.Errorf("provider %s/%s is not a provider service: its provider config has no serviceURL. "+
			"This image (the operator's kfp-task) only calls provider services (spec.serviceImage); a CLI provider's spec.image must implement the operation itself",
			cfg.Namespace, cfg.Name)
	}
	u, err := url.Parse(cfg.ServiceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("provider %s/%s: serviceURL %q is not an http(s) URL of a service", cfg.Namespace, cfg.Name, cfg.ServiceURL)
	}
	return strings.TrimRight(cfg.ServiceURL, "/"), nil
}

func readJSON(path, flagName string, into any) error {
	if path == "" {
		return fmt.Errorf("%s is required", flagName)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s %s: %v", flagName, path, err)
	}
	return nil
}

// send makes the call, retrying once, after retryDelay, when the
// connection is refused (the request never reached the service, so even a
// create is safe to repeat).
func (c *serviceClient) send(ctx context.Context, method, target string, body []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		var reader io.Reader = http.NoBody
		if body != nil {
			reader = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, reader)
		if err != nil {
			return 0, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", "kfp-tekton-operator-kfp-task")
		resp, err := c.client.Do(req)
		if err != nil {
			if attempt == 0 && errors.Is(err, syscall.ECONNREFUSED) {
				fmt.Fprintf(c.log, "kfp-task: %s %s: %v; retrying in %s\n", method, target, err, c.retryDelay)
				select {
				case <-time.After(c.retryDelay):
					continue
				case <-ctx.Done():
					return 0, nil, ctx.Err()
				}
			}
			return 0, nil, err
		}
		answer, err := io.ReadAll(io.LimitReader(resp.Body, maxServiceAnswer))
		resp.Body.Close()
		if err != nil {
			return 0, nil, fmt.Errorf("reading the answer (HTTP %d): %w", resp.StatusCode, err)
		}
		return resp.StatusCode, answer, nil
	}
}

// inClusterTransport is the default transport without proxies: the
// provider service and the operator's /events are in the cluster.
func inClusterTransport(tlsConfig *tls.Config) *http.Transport {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	return transport
}
