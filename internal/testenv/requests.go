package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	kubescheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Writes counts the write requests (POST, PUT, PATCH, DELETE) a client
// makes, by verb and resource ("PATCH experiments/status", "POST events"),
// and attributes each to the resource it is for ("experiments ns/name"):
// a resource's own writes by URL, a PipelineRun by its owner labels, an
// Event by the object it regards. Wrap a rest.Config's transport with it:
//
//	cfg.Wrap(writes.Wrap)
type Writes struct {
	mu sync.Mutex
	// bySubject holds, per subject, the count per "VERB resource".
	bySubject map[string]map[string]int
	// owners remembers the subject of PipelineRuns and Events by name, for
	// their later writes.
	owners map[string]string
	// sequence holds, per subject, its writes in order with a summary.
	sequence map[string][]string
}

// NewWrites returns an empty counter.
func NewWrites() *Writes {
	return &Writes{bySubject: map[string]map[string]int{}, owners: map[string]string{}, sequence: map[string][]string{}}
}

// Wrap is a transport.WrapperFunc: rt with every write counted.
func (w *Writes) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			return rt.RoundTrip(req)
		}
		var body []byte
		if req.Body != nil && req.GetBody != nil {
			if rc, err := req.GetBody(); err == nil {
				body, _ = io.ReadAll(rc)
				rc.Close()
			}
		} else if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 {
			w.count(req.Method, req.URL.Path, body)
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// count records one successful write to path with body.
func (w *Writes) count(verb, path string, body []byte) {
	namespace, resource, name, sub := parsePath(path)
	w.mu.Lock()
	defer w.mu.Unlock()
	subject, summary := "", ""
	switch resource {
	case "pipelineruns", "events":
		var obj struct {
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Reason         string     `json:"reason"`
			Regarding      *objectRef `json:"regarding"`
			InvolvedObject *objectRef `json:"involvedObject"`
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			// Events go as protobuf.
			switch e, _, _ := kubescheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); e := e.(type) {
			case *eventsv1.Event:
				obj.Metadata.Name, obj.Reason = e.Name, e.Reason
				obj.Regarding = &objectRef{Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name}
			case *corev1.Event:
				obj.Metadata.Name, obj.Reason = e.Name, e.Reason
				obj.InvolvedObject = &objectRef{Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}
			}
		}
		if name == "" {
			name = obj.Metadata.Name
		}
		switch {
		case obj.Metadata.Labels[contract.LabelOwnerKind] != "":
			subject = plural(obj.Metadata.Labels[contract.LabelOwnerKind]) + " " +
				obj.Metadata.Labels[contract.LabelOwnerNamespace] + "/" + obj.Metadata.Labels[contract.LabelOwnerName]
		case obj.Regarding != nil:
			subject = obj.Regarding.subject()
		case obj.InvolvedObject != nil:
			subject = obj.InvolvedObject.subject()
		}
		summary = obj.Reason
		key := resource + " " + namespace + "/" + name
		if subject != "" {
			w.owners[key] = subject
		} else {
			subject = w.owners[key]
		}
	default:
		if name != "" {
			subject = resource + " " + namespace + "/" + name
		}
		summary = summarize(body)
	}
	if subject == "" {
		subject = "other"
	}
	what := verb + " " + resource
	if sub != "" {
		what += "/" + sub
	}
	if w.bySubject[subject] == nil {
		w.bySubject[subject] = map[string]int{}
	}
	w.bySubject[subject][what]++
	if summary != "" {
		what += " (" + summary + ")"
	}
	w.sequence[subject] = append(w.sequence[subject], what)
}

// summarize is what a patch changes, shortened: the finalizers it sets, or
// the Ready condition's reason it writes.
func summarize(body []byte) string {
	var patch struct {
		Metadata struct {
			Finalizers []string `json:"finalizers"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct {
				Type, Status, Reason string
			} `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(body, &patch) != nil {
		return ""
	}
	var parts []string
	if len(patch.Metadata.Finalizers) > 0 {
		parts = append(parts, "finalizers "+strings.Join(patch.Metadata.Finalizers, ","))
	}
	for _, c := range patch.Status.Conditions {
		if c.Type == "Ready" {
			parts = append(parts, "Ready "+c.Status+" "+c.Reason)
		}
	}
	return strings.Join(parts, "; ")
}

// Sequence is subject's writes so far, in order, each with a summary of
// what it wrote where known.
func (w *Writes) Sequence(subject string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.sequence[subject]...)
}

type objectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r *objectRef) subject() string { return plural(r.Kind) + " " + r.Namespace + "/" + r.Name }

// plural is a kind's resource name (Experiment, experiment: experiments).
func plural(kind string) string { return strings.ToLower(kind) + "s" }

// parsePath splits an API path: /api/v1/namespaces/ns/events,
// /apis/group/version/namespaces/ns/experiments/name/status.
func parsePath(path string) (namespace, resource, name, sub string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		namespace, parts = parts[1], parts[2:]
	}
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		sub = strings.Join(parts[2:], "/")
	}
	return namespace, resource, name, sub
}

// Of is the writes counted for subject ("experiments ns/name") so far, by
// "VERB resource".
func (w *Writes) Of(subject string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.bySubject[subject] {
		out[k] = v
	}
	return out
}

// Subjects are the subjects with writes counted so far, sorted.
func (w *Writes) Subjects() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for s := range w.bySubject {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Total is the number of writes in counts.
func Total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// Breakdown prints counts as "3 writes: 1 PATCH experiments, 1 POST events, …".
func Breakdown(counts map[string]int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return fmt.Sprintf("%d writes: %s", Total(counts), strings.Join(parts, ", "))
}
