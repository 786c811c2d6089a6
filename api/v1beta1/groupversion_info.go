// Package v1beta1 holds the pipelines.kubeflow.org/v1beta1 API: the resources
// users apply (Pipeline, RunConfiguration, RunSchedule, Run, Experiment) and
// the Provider that says how and where their PipelineRuns execute.
//
// +kubebuilder:object:generate=true
// +groupName=pipelines.kubeflow.org
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "pipelines.kubeflow.org", Version: "v1beta1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
