package main

// The provider service's answer read as a provider's output.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

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
