// Package v1alpha6 serves kfp-operator's pipelines.kubeflow.org/v1alpha6
// API (kfp-operator v0.6) beside this project's v1beta1, the storage
// version: Pipeline, RunConfiguration, RunSchedule, Run, Experiment and
// Provider, in the JSON shape kfp-operator's v1alpha6 gave them
// (sky-uk/kfp-operator apis/pipelines/v1alpha6/*_types.go and the v0.6.0
// reference under docs-gen/content/archive/v0.6.0/reference/resources/).
// Each kind converts to and from v1beta1 without loss (conversion.go).
//
// +kubebuilder:object:generate=true
// +groupName=pipelines.kubeflow.org
package v1alpha6

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "pipelines.kubeflow.org", Version: "v1alpha6"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
