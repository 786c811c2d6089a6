package runconfiguration

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
)

// child is the readiness of one RunSchedule or Run a RunConfiguration made.
type child struct {
	kind, name string
	ready      *metav1.Condition // nil until its controller reported
	generation int64
}

func children(schedules []*pipelinesv1beta1.RunSchedule, runs []pipelinesv1beta1.Run) []child {
	var out []child
	for _, s := range schedules {
		out = append(out, child{"RunSchedule", s.Name, meta.FindStatusCondition(s.Status.Conditions, pipelinesv1beta1.ConditionReady), s.Generation})
	}
	for i := range runs {
		r := &runs[i]
		out = append(out, child{"Run", r.Name, meta.FindStatusCondition(r.Status.Conditions, pipelinesv1beta1.ConditionReady), r.Generation})
	}
	return out
}

// maxNamed bounds how many children a message names.
const maxNamed = 3

// aggregate is a RunConfiguration's readiness from its children's: not
// Ready when one is refused (False, saying which and why), in progress while
// one has not reported on its current spec, Ready with synced otherwise.
// final says the outcome is settled for this generation.
func aggregate(children []child, pending pipelinesv1beta1.SynchronizationState, synced string) (status.Report, bool) {
	var failed, waiting []string
	for _, c := range children {
		switch {
		case c.ready == nil || c.ready.ObservedGeneration != c.generation || c.ready.Status == metav1.ConditionUnknown:
			waiting = append(waiting, c.kind+" "+c.name)
		case c.ready.Status == metav1.ConditionFalse:
			failed = append(failed, fmt.Sprintf("%s %s: %s: %s", c.kind, c.name, c.ready.Reason, c.ready.Message))
		}
	}
	switch {
	case len(failed) > 0:
		return status.Failed(pipelinesv1beta1.ReasonOwnedResourceNotReady,
			fmt.Sprintf("%d of %d owned resources not Ready: %s", len(failed), len(children), list(failed, "; "))), true
	case len(waiting) > 0:
		return status.Progressing(pending, fmt.Sprintf("waiting for %s to be Ready", list(waiting, ", "))), false
	}
	return status.Synced(synced), true
}

// list joins the first maxNamed items and counts the rest.
func list(items []string, sep string) string {
	if len(items) <= maxNamed {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:maxNamed], sep) + fmt.Sprintf("%sand %d more", sep, len(items)-maxNamed)
}
