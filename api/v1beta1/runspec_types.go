package v1beta1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipelineReference names a Pipeline as "name" (its newest version) or
// "name:version": the name a DNS-1123 subdomain, the version up to 128
// letters, digits, '_', '.' and '-', not starting with '.' or '-' (an image
// tag's syntax).
// +kubebuilder:validation:MaxLength=382
// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$') && self.matches('^[^:]{1,253}(:.*)?$')`,message=`must be NAME or NAME:VERSION (NAME a DNS-1123 name; VERSION up to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'), e.g. penguin or penguin:v1`
type PipelineReference string

// Name is the referenced Pipeline's name, without the version.
func (p PipelineReference) Name() string {
	name, _, _ := strings.Cut(string(p), ":")
	return name
}

// RunSpec is what to run: a pipeline version with parameters. Run,
// RunSchedule and RunConfiguration share it.
//
// Sizes: the resource reaches the provider's step through one environment
// variable, which Linux limits to 128 KiB; 64 KiB of values leaves room for
// the rest of the resource and for JSON escaping of ordinary text. What
// still does not fit (e.g. values made of characters JSON escapes six-fold)
// is refused by the operator with reason InvalidSpec, without a PipelineRun.
// +kubebuilder:validation:XValidation:rule="!has(self.parameters) || self.parameters.map(p, has(p.value) ? size(p.value) : 0).sum() <= 65536",message="the parameters' values may total at most 65536 bytes"
type RunSpec struct {
	// Provider that executes the run.
	// +required
	Provider ProviderReference `json:"provider"`

	// Pipeline to run.
	// +required
	Pipeline PipelineReference `json:"pipeline"`

	// ExperimentName groups runs in the backend; the provider's default when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ExperimentName string `json:"experimentName,omitempty"`

	// Parameters of the pipeline run; names are unique.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=200
	Parameters []RuntimeParameter `json:"parameters,omitempty"`

	// Artifacts the run exposes as outputs.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Artifacts []OutputArtifact `json:"artifacts,omitempty"`

	// ArtifactRepositoryRef overrides the namespace's default artifact repository.
	// +optional
	ArtifactRepositoryRef *ArtifactRepositoryRef `json:"artifactRepositoryRef,omitempty"`
}

// RuntimeParameter is one pipeline parameter, given directly or taken from
// the output artifact of another RunConfiguration's latest successful run.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.valueFrom)",message="exactly one of value or valueFrom must be set"
type RuntimeParameter struct {
	// Name of the parameter.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value of the parameter.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Value string `json:"value,omitempty"`

	// ValueFrom takes the value from elsewhere.
	// +optional
	ValueFrom *ValueFrom `json:"valueFrom,omitempty"`
}

// ValueFrom is the source of a parameter value.
type ValueFrom struct {
	// RunConfigurationRef takes an output artifact of a RunConfiguration's
	// latest successful run.
	// +required
	RunConfigurationRef RunConfigurationRef `json:"runConfigurationRef"`
}

// RunConfigurationRef names an output artifact of a RunConfiguration in the
// same namespace.
type RunConfigurationRef struct {
	// Name of the RunConfiguration.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// OutputArtifact is the name of one of its artifacts.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	OutputArtifact string `json:"outputArtifact"`

	// Optional: when the RunConfiguration has no succeeded run with that
	// artifact, the parameter is left out (and an Event says so) instead of
	// the run waiting for it.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// OutputArtifact exposes a pipeline output as a named artifact.
type OutputArtifact struct {
	// Name of the artifact.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Path locates the output in the pipeline, as kfp-operator's paths do:
	// COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX, either optionally
	// followed by [FILTER], e.g. "CsvExampleGen:examples", "train:model:0"
	// or "Pusher:pushed_model:0[pushed == 1]". COMPONENT is the pipeline's
	// task and ARTIFACT its output artifact; INDEX (0 when empty or left
	// out) picks that artifact of the output's list, counting all of them;
	// FILTER, a go-bexpr expression over that artifact's metadata (as
	// kfp-operator's), must hold for it to be selected: conditions KEY ==
	// VALUE, !=, contains, in, matches, is empty, is nil (and their not
	// forms) joined by and, or, not and parentheses; VALUE a number, a
	// "string", a `string` or a bare word; a missing key selects nothing.
	// None of the parts may contain ':', '[' or ']'. The API server checks
	// this form; a FILTER go-bexpr cannot compile (kfp-operator admits it
	// too) selects nothing, and the operator reports the artifact missing.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^:\\[\\]]+:[^:\\[\\]]+(:[0-9]*)?(\\[[^:\\[\\]]+\\])?$')`,message=`must be COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX, optionally followed by [FILTER]: COMPONENT, ARTIFACT and FILTER not empty and none of them containing ':', '[' or ']', INDEX digits (0 when empty); e.g. CsvExampleGen:examples, train:model:0 or Pusher:pushed_model:0[pushed == 1]`
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[^:]*:[^:]*:[0-9]') || self.matches('^[^:]*:[^:]*:0*([0-9]{0,18}|[0-8][0-9]{18}|9[01][0-9]{17}|92[01][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[01][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|922337203685477580[0-7])([^0-9]|$)')`,message=`INDEX must be at most 9223372036854775807`
	Path string `json:"path"`
}

// Schedule is a cron schedule with an optional active window.
// +kubebuilder:validation:XValidation:rule="!has(self.startTime) || !has(self.endTime) || timestamp(self.startTime) < timestamp(self.endTime)",message="startTime must be before endTime"
type Schedule struct {
	// CronExpression in standard five-field (or six-field, with seconds) form,
	// or a descriptor such as "@daily" or "@every 90m" (at least a minute).
	// The operator parses it before any backend sees it: values out of range
	// make the resource Ready=False with reason InvalidSpec.
	// +required
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|@every [0-9]+[0-9a-z.]*|([0-9A-Za-z*?/,#-]+[ \\t]+){4,5}[0-9A-Za-z*?/,#-]+)$')`,message=`must be a cron expression of five fields (minute hour day-of-month month day-of-week) or six (seconds first), e.g. "0 2 * * *", or a descriptor: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every DURATION (e.g. @every 90m)`
	CronExpression string `json:"cronExpression"`

	// StartTime before which the schedule does not fire.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime after which the schedule does not fire.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}
