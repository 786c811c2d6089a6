package lifecycle

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
)

// A cached copy at a version this controller's own writes replaced is
// behind them; the newest, anyone's later one, or an expired memory is not.
func TestBehindOwnWrite(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	r := &Reconciler[*pipelinesv1beta1.Experiment]{Settings: Settings{Now: func() time.Time { return now }}}
	at := func(rv string) *pipelinesv1beta1.Experiment {
		return &pipelinesv1beta1.Experiment{ObjectMeta: metav1.ObjectMeta{UID: types.UID("u"), ResourceVersion: rv}}
	}
	r.wrote(at("2"), "1") // the finalizer
	r.wrote(at("3"), "2") // the status
	r.wrote(at("3"), "3") // a patch that changed nothing
	for _, c := range []struct {
		rv     string
		behind bool
	}{{"1", true}, {"2", true}, {"3", false}, {"1", false}} { // the newest seen: forgotten
		if got := r.behindOwnWrite(at(c.rv)); got != c.behind {
			t.Errorf("cached at %s: behindOwnWrite = %v, want %v", c.rv, got, c.behind)
		}
	}

	r.wrote(at("5"), "4")
	if r.behindOwnWrite(at("9")) {
		t.Error("a later write by anyone is not behind")
	}
	if r.behindOwnWrite(at("4")) {
		t.Error("forgotten once a later version was seen")
	}

	r.wrote(at("7"), "6")
	now = now.Add(expectationTimeout + time.Second)
	if r.behindOwnWrite(at("6")) {
		t.Error("an expired memory holds nothing back")
	}
}

// Work under way records no Event; reaching Ready, failing and waiting on
// something else do.
func TestUnderWayIsQuiet(t *testing.T) {
	for _, c := range []struct {
		report status.Report
		quiet  bool
	}{
		{status.Progressing(pipelinesv1beta1.StateCreating, "running"), true},
		{status.Blocked(pipelinesv1beta1.ReasonQueued, pipelinesv1beta1.StateCreating, "queued"), true},
		{status.Blocked(pipelinesv1beta1.ReasonProviderNotReady, pipelinesv1beta1.StateCreating, "provider"), false},
		{status.Synced("done"), false},
		{status.Failed(pipelinesv1beta1.ReasonPipelineRunFailed, "failed"), false},
	} {
		if got := underWay(c.report); got != c.quiet {
			t.Errorf("underWay(%s) = %v, want %v", c.report.Reason, got, c.quiet)
		}
	}
}
