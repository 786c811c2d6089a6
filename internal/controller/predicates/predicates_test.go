package predicates

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func TestBeingDeleted(t *testing.T) {
	now := metav1.Now()
	live := &pipelinesv1beta1.Run{}
	deleting := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	if BeingDeleted.Update(event.UpdateEvent{ObjectOld: live, ObjectNew: live}) {
		t.Error("an update not marking deletion passed")
	}
	if !BeingDeleted.Update(event.UpdateEvent{ObjectOld: live, ObjectNew: deleting}) {
		t.Error("an update marking deletion was filtered out")
	}
	if BeingDeleted.Create(event.CreateEvent{Object: live}) || BeingDeleted.Delete(event.DeleteEvent{Object: live}) ||
		BeingDeleted.Generic(event.GenericEvent{Object: live}) {
		t.Error("a create, delete or generic event passed")
	}
}

func TestLatestRunsChanged(t *testing.T) {
	rc := func(succeeded string, generation int64) *pipelinesv1beta1.RunConfiguration {
		rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
		if succeeded != "" {
			rc.Status.LatestRuns.Succeeded = &pipelinesv1beta1.RunReference{ProviderID: succeeded}
		}
		return rc
	}
	for _, tc := range []struct {
		name          string
		before, after *pipelinesv1beta1.RunConfiguration
		want          bool
	}{
		{"a first succeeded run", rc("", 1), rc("a", 1), true},
		{"a new succeeded run", rc("a", 1), rc("b", 1), true},
		{"the same latest runs, another generation", rc("a", 1), rc("a", 2), false},
		{"no runs either side", rc("", 1), rc("", 2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LatestRunsChanged.Update(event.UpdateEvent{ObjectOld: tc.before, ObjectNew: tc.after}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	// Creates and deletes are not filtered: a new upstream may resolve a run.
	if !LatestRunsChanged.Create(event.CreateEvent{Object: rc("", 1)}) {
		t.Error("a create was filtered out")
	}
}
