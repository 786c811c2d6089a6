// Package predicates holds the event filters the controllers share.
package predicates

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// BeingDeleted passes only updates that mark an object for deletion: they
// change no generation, yet a controller with a finalizer must see them.
var BeingDeleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
}

// LatestRunsChanged passes RunConfiguration updates that change
// status.latestRuns: only a new latest run can resolve a dependency or
// fire a trigger. Both the engine (Runs waiting on a valueFrom) and the
// RunConfiguration controller (triggers) watch with it.
var LatestRunsChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return !equality.Semantic.DeepEqual(e.ObjectOld.(*pipelinesv1beta1.RunConfiguration).Status.LatestRuns,
		e.ObjectNew.(*pipelinesv1beta1.RunConfiguration).Status.LatestRuns)
}}
