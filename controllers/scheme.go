// Package controllers holds one reconciler per kind, in sub-packages, and
// what they share.
package controllers

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// NewScheme knows the built-in kinds, this project's kinds and Tekton v1.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, pipelinesv1beta1.AddToScheme, tektonv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // only on conflicting registrations: a programming error
		}
	}
	return s
}

// BeingDeleted passes only updates that mark an object for deletion: they
// change no generation, yet a controller with a finalizer must see them.
var BeingDeleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
}
