package main

// The provider-service client: for a Provider with spec.serviceImage, the
// shared Tasks' provider step runs this binary as the provider,
//
//	kfp-task KIND OPERATION --provider-config F --resource F --output F [--pipeline-definition F]
//
// and it calls the provider service (kfp-operator's provider-service HTTP
// API, v1beta1 resources, master after v0.7.0) at the provider config's
// serviceURL, then writes the service's answer to --output as a CLI
// provider would. serviceRequest (this file and servicebody.go) and outputOf
// (serviceanswer.go) hold every decision; the rest (serviceclient.go) is
// I/O.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

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

func decodeSpec(res contract.Resource, into any) error {
	if len(res.Spec) == 0 {
		return fmt.Errorf("the resource %s/%s has no spec", res.Metadata.Namespace, res.Metadata.Name)
	}
	if err := json.Unmarshal(res.Spec, into); err != nil {
		return fmt.Errorf("the spec of %s %s/%s: %w", res.Kind, res.Metadata.Namespace, res.Metadata.Name, err)
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
