package e2e

// No build tag: what here is pure runs with the unit tests too (go test
// ./...), where TestMain, which needs the cluster, is not compiled in.
//
// The suite shares its cluster with whatever else runs there (`make demo`
// leaves team-a's every-minute RunConfiguration completing runs, an earlier
// run may leave namespaces behind): what a test asserts must be about the
// objects it made itself. These decide what is a test's own.

import "strings"

// eventNamespaces are the namespaces a run-completion CloudEvent names:
// that of the resource whose outbox held it (its kfpresource extension,
// "Run namespace/name") and that of the Provider that reported it (its
// source, "namespace/name"). Missing or malformed attributes name none.
func eventNamespaces(resource, source string) []string {
	var out []string
	if _, ref, ok := strings.Cut(resource, " "); ok {
		if ns, name, ok := strings.Cut(ref, "/"); ok && ns != "" && name != "" {
			out = append(out, ns)
		}
	}
	if ns, name, ok := strings.Cut(source, "/"); ok && ns != "" && name != "" {
		out = append(out, ns)
	}
	return out
}

// ownEvent reports whether a run-completion CloudEvent, by its kfpresource
// and source attributes, concerns one of the namespaces ours.
func ownEvent(resource, source string, ours map[string]bool) bool {
	for _, ns := range eventNamespaces(resource, source) {
		if ours[ns] {
			return true
		}
	}
	return false
}

// testSinkName names the CloudEvent sink the suite adds to the operator's
// eventSinks (withSink); CompletionEventsDelivered and forged outbox
// entries name it.
const testSinkName = "e2e"

// otherSinks are the entries of an eventSinks value (the operator chart's,
// as helm get values returns it) that are not the suite's: those
// configured by someone else, which a test keeps, without a leftover of an
// interrupted run, which it drops.
func otherSinks(eventSinks any) []any {
	list, _ := eventSinks.([]any)
	out := []any{}
	for _, s := range list {
		if m, _ := s.(map[string]any); m == nil || m["name"] != testSinkName {
			out = append(out, s)
		}
	}
	return out
}

// withoutTestSinks is a copy of an operator release's values without the
// suite's event sink: what a test restores when it ends.
func withoutTestSinks(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[k] = v
	}
	if v, ok := values["eventSinks"]; ok {
		out["eventSinks"] = otherSinks(v)
	}
	return out
}
