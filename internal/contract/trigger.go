package contract

import (
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// TriggerIndicator says what started a run, as kfp-operator sends it to
// provider services in run and runschedule bodies (its KFP service turns
// it into run labels `trigger-type`, `trigger-source` and
// `trigger-source-namespace`, its Vertex AI service into job labels).
type TriggerIndicator struct {
	// Type is one of the Trigger* constants; empty for a Run no
	// RunConfiguration made.
	Type string `json:"type"`
	// Source names what fired: the RunConfiguration (onChangeRunSpec), its
	// pipeline (onChangePipeline), the upstream RunConfiguration
	// (runConfiguration), or the RunSchedule itself (schedule).
	Source string `json:"source"`
	// SourceNamespace is Source's namespace.
	SourceNamespace string `json:"sourceNamespace"`
}

// Trigger types, kfp-operator's values.
const (
	TriggerOnChangePipeline = "onChangePipeline"
	TriggerOnChangeRunSpec  = "onChangeRunSpec"
	TriggerRunConfiguration = "runConfiguration"
	TriggerSchedule         = "schedule"
)

// Annotations are t as a Run's annotations.
func (t TriggerIndicator) Annotations() map[string]string {
	return map[string]string{pipelinesv1beta1.AnnotationTriggerType: t.Type, pipelinesv1beta1.AnnotationTriggerSource: t.Source,
		pipelinesv1beta1.AnnotationTriggerSourceNamespace: t.SourceNamespace}
}

// TriggerOf is the trigger indicator of a resource of kind, named
// name/namespace, with annotations: a RunSchedule is its own source (each
// of its runs is scheduled); a Run's is what its RunConfiguration
// recorded on it, all empty for a Run made by hand (as kfp-operator sends
// it); other kinds have none.
func TriggerOf(kind, namespace, name string, annotations map[string]string) *TriggerIndicator {
	switch kind {
	case "RunSchedule":
		return &TriggerIndicator{Type: TriggerSchedule, Source: name, SourceNamespace: namespace}
	case "Run":
		// Annotations are the tenant's to write: whatever they say, a
		// source is of the Run's own namespace (every trigger's is), so a
		// Run cannot claim another team's RunConfiguration fired it.
		t := &TriggerIndicator{Type: annotations[pipelinesv1beta1.AnnotationTriggerType], Source: annotations[pipelinesv1beta1.AnnotationTriggerSource]}
		if t.Type != "" || t.Source != "" {
			t.SourceNamespace = namespace
		}
		return t
	}
	return nil
}
