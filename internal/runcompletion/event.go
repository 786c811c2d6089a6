// Package runcompletion is the wire format of run-completion events, as
// kfp-operator's provider services post them to the operator's /events
// endpoint and as the operator publishes them as CloudEvents (data of type
// org.kubeflow.pipelines.run-completion), and the outbox that holds them
// in a resource's status until every sink has them.
//
// The field names follow kfp-operator's RunCompletionEventData (v0.7 and
// later: pipelineComponents, runStartTime, runEndTime, provider as a
// namespaced name).
package runcompletion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/artifactpath"
)

// EventType is the CloudEvent type of a run completion.
const EventType = "org.kubeflow.pipelines.run-completion"

// Status is how a run ended, in the event's words.
type Status string

// Statuses.
const (
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
)

// NamespacedName is "namespace/name" on the wire (or just "name").
// Decoding also takes {"namespace": …, "name": …}, which some provider
// services send.
type NamespacedName struct {
	Namespace string
	Name      string
}

func (n NamespacedName) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// MarshalJSON writes "namespace/name".
func (n NamespacedName) MarshalJSON() ([]byte, error) {
	return json.Marshal(n.String())
}

// UnmarshalJSON reads "namespace/name", "name" or an object.
func (n *NamespacedName) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var o struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		}
		if err := json.Unmarshal(data, &o); err != nil {
			return err
		}
		*n = NamespacedName{Namespace: o.Namespace, Name: o.Name}
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New(`want "namespace/name" or {"namespace", "name"}`)
	}
	ns, name, found := strings.Cut(s, "/")
	if !found {
		*n = NamespacedName{Name: s}
		return nil
	}
	if strings.Contains(name, "/") || ns == "" || name == "" {
		return fmt.Errorf("%q: want namespace/name", s)
	}
	*n = NamespacedName{Namespace: ns, Name: name}
	return nil
}

// Artifact is a named artifact location (the deprecated
// servingModelArtifacts list).
type Artifact struct {
	Name     string `json:"name"`
	Location string `json:"location"`
}

// ArtifactInstance is one artifact a component's output produced.
type ArtifactInstance struct {
	URI      string         `json:"uri"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ComponentArtifact is one output of a component.
type ComponentArtifact struct {
	Name      string             `json:"name"`
	Artifacts []ArtifactInstance `json:"artifacts"`
}

// PipelineComponent is one component of the run and its outputs.
type PipelineComponent struct {
	Name               string              `json:"name"`
	ComponentArtifacts []ComponentArtifact `json:"componentArtifacts"`
}

// EventData is a run-completion event's data.
type EventData struct {
	Status                Status              `json:"status"`
	PipelineName          NamespacedName      `json:"pipelineName"`
	RunConfigurationName  *NamespacedName     `json:"runConfigurationName,omitempty"`
	RunName               *NamespacedName     `json:"runName,omitempty"`
	RunID                 string              `json:"runId"`
	RunStartTime          *time.Time          `json:"runStartTime,omitempty"`
	RunEndTime            *time.Time          `json:"runEndTime,omitempty"`
	ServingModelArtifacts []Artifact          `json:"servingModelArtifacts"`
	PipelineComponents    []PipelineComponent `json:"pipelineComponents"`
	Provider              NamespacedName      `json:"provider"`
}

// MaxRunID bounds runId: it becomes the CloudEvent id and a status field.
const MaxRunID = 512

// Decode reads an event posted to /events: the data itself, or a
// structured-mode CloudEvent (JSON with specversion) carrying it. Names
// without a namespace are taken to be in the namespace of the Run or
// RunConfiguration the event is for. The error says what is wrong.
func Decode(body []byte) (EventData, error) {
	var envelope struct {
		SpecVersion string          `json:"specversion"`
		Type        string          `json:"type"`
		Data        json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return EventData{}, fmt.Errorf("body is not JSON: %w", err)
	}
	if envelope.SpecVersion != "" {
		if envelope.Type != EventType {
			return EventData{}, fmt.Errorf("CloudEvent type %q, want %s", envelope.Type, EventType)
		}
		body = envelope.Data
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var e EventData
	if err := dec.Decode(&e); err != nil {
		return EventData{}, fmt.Errorf("event data: %w", err)
	}
	return e, e.normalise()
}

// normalise checks the fields the operator acts on and fills in omitted
// namespaces.
func (e *EventData) normalise() error {
	if e.Status != Succeeded && e.Status != Failed {
		return fmt.Errorf("status %q: want %q or %q", e.Status, Succeeded, Failed)
	}
	if e.RunName == nil && e.RunConfigurationName == nil {
		return errors.New("neither runName nor runConfigurationName: the event names no resource")
	}
	if e.RunID == "" || len(e.RunID) > MaxRunID {
		return fmt.Errorf("runId must have 1 to %d bytes, has %d", MaxRunID, len(e.RunID))
	}
	ns := ""
	for _, ref := range []struct {
		field string
		name  *NamespacedName
	}{{"runName", e.RunName}, {"runConfigurationName", e.RunConfigurationName}} {
		if ref.name == nil {
			continue
		}
		if err := checkName(ref.field, *ref.name); err != nil {
			return err
		}
		if ref.name.Namespace == "" {
			return fmt.Errorf("%s %q has no namespace", ref.field, ref.name.Name)
		}
		if ns != "" && ref.name.Namespace != ns {
			return fmt.Errorf("runName and runConfigurationName are in different namespaces (%s, %s)", ns, ref.name.Namespace)
		}
		ns = ref.name.Namespace
	}
	if e.Provider.Name == "" {
		return errors.New("provider is empty: the event must name the Provider that reports it")
	}
	if e.Provider.Namespace == "" {
		e.Provider.Namespace = ns
	}
	if err := checkName("provider", e.Provider); err != nil {
		return err
	}
	if e.PipelineName.Namespace == "" && e.PipelineName.Name != "" {
		e.PipelineName.Namespace = ns
	}
	return nil
}

func checkName(field string, n NamespacedName) error {
	if n.Namespace != "" {
		if errs := validation.IsDNS1123Label(n.Namespace); len(errs) > 0 {
			return fmt.Errorf("%s: namespace %q: %s", field, n.Namespace, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
		return fmt.Errorf("%s: name %q: %s", field, n.Name, strings.Join(errs, "; "))
	}
	return nil
}

// Components are the event's artifacts in the shape artifact paths select from.
func (e EventData) Components() []artifactpath.Component {
	out := make([]artifactpath.Component, 0, len(e.PipelineComponents))
	for _, pc := range e.PipelineComponents {
		c := artifactpath.Component{Name: pc.Name}
		for _, ca := range pc.ComponentArtifacts {
			o := artifactpath.Output{Name: ca.Name}
			for _, a := range ca.Artifacts {
				o.Artifacts = append(o.Artifacts, artifactpath.Artifact{URI: a.URI, Metadata: a.Metadata})
			}
			c.Outputs = append(c.Outputs, o)
		}
		out = append(out, c)
	}
	return out
}

// FromComponents is the wire form of a run's artifacts.
func FromComponents(components []artifactpath.Component) []PipelineComponent {
	out := make([]PipelineComponent, 0, len(components))
	for _, c := range components {
		pc := PipelineComponent{Name: c.Name, ComponentArtifacts: []ComponentArtifact{}}
		for _, o := range c.Outputs {
			ca := ComponentArtifact{Name: o.Name, Artifacts: []ArtifactInstance{}}
			for _, a := range o.Artifacts {
				ca.Artifacts = append(ca.Artifacts, ArtifactInstance{URI: a.URI, Metadata: a.Metadata})
			}
			pc.ComponentArtifacts = append(pc.ComponentArtifacts, ca)
		}
		out = append(out, pc)
	}
	return out
}

// ProviderAudience is the audience a token must be issued for to report
// for Provider namespace/name: base (the operator's events audience)
// scoped to that Provider, so an account several Providers share (a shared
// workflow namespace) cannot report for one with the token of another.
func ProviderAudience(base, namespace, name string) string {
	return base + "/" + namespace + "/" + name
}
