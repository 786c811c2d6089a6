package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func readyProvider(allowed ...string) *pipelinesv1beta1.Provider {
	return &pipelinesv1beta1.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"},
		Spec:       pipelinesv1beta1.ProviderSpec{AllowedNamespaces: allowed},
		Status: pipelinesv1beta1.ProviderStatus{Image: "registry/provider@sha256:1",
			Conditions: []metav1.Condition{{Type: pipelinesv1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: "TasksApplied"}}},
	}
}

func notReadyProvider() *pipelinesv1beta1.Provider {
	p := readyProvider()
	p.Status.Conditions[0].Status, p.Status.Conditions[0].Message = metav1.ConditionFalse, "image not resolvable"
	return p
}

// observation of Pipeline team-a/penguin at version v2, provider team-a/kfp.
func observation(change func(*Observation)) Observation {
	o := Observation{
		Now: t0, Traits: Traits{Name: "pipeline"},
		Subject:   &pipelinesv1beta1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "penguin", UID: "uid-1", Generation: 3}},
		Namespace: "team-a", Generation: 3,
		ProviderKey: types.NamespacedName{Namespace: "team-a", Name: "kfp"}, Provider: readyProvider(),
		WorkflowNamespace: "team-a", Version: "v2", HelperConfigured: true,
		Backoff: Backoff{Base: 10 * time.Second, Max: time.Minute}, RetryAfter: 30 * time.Second,
	}
	if change != nil {
		change(&o)
	}
	return o
}

// run is a run of op at version made for team-a/kfp; finished minutes ago
// (negative: still running).
type runOpt func(*RunRecord)

func run(ordinal int, op contract.Operation, version string, opts ...runOpt) *RunRecord {
	r := &RunRecord{Namespace: "team-a", Name: "run-" + string(op) + "-" + version + "-" + string(rune('0'+ordinal)),
		Op: op, Version: version, Ordinal: ordinal, Provider: "team-a/kfp"}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

func succeededAt(id string, ago time.Duration) runOpt {
	return func(r *RunRecord) { r.Done, r.Succeeded, r.ID, r.FinishedAt = true, true, id, t0.Add(-ago) }
}

func failedAt(why string, ago time.Duration) runOpt {
	return func(r *RunRecord) { r.Done, r.Failure, r.FinishedAt = true, why, t0.Add(-ago) }
}

func cancelled(r *RunRecord) { r.Cancelled = true }

// want is the part of a Decision a row checks.
type want struct {
	action   ActionKind
	op       contract.Operation
	version  string
	ordinal  int
	attempt  int
	ready    metav1.ConditionStatus // "" = no report
	reason   string
	state    pipelinesv1beta1.SynchronizationState
	message  []string
	observed bool
	outcome  outcome.Class
	after    time.Duration
	record   string // backend id recorded ("" = none)
}

func check(t *testing.T, w want, d Decision) {
	t.Helper()
	assert.Equal(t, w.action, d.Action.Kind, "action")
	if w.action == StartRun {
		assert.Equal(t, w.op, d.Action.Op, "op")
		assert.Equal(t, w.version, d.Action.Version, "version")
		assert.Equal(t, w.ordinal, d.Action.Ordinal, "ordinal")
		assert.Equal(t, w.attempt, d.Action.Attempt, "attempt")
	}
	if w.ready == "" {
		assert.Nil(t, d.Report, "no report")
	} else if assert.NotNil(t, d.Report, "report") {
		assert.Equal(t, w.ready, d.Report.Ready, d.Report.Message)
		assert.Equal(t, w.reason, d.Report.Reason, d.Report.Message)
		if w.state != "" {
			assert.Equal(t, w.state, d.Report.State)
		}
		for _, m := range w.message {
			assert.Contains(t, d.Report.Message, m)
		}
	}
	assert.Equal(t, w.observed, d.Observed, "observed")
	assert.Equal(t, w.outcome, d.Outcome.Class, "outcome")
	assert.Equal(t, w.after, d.Outcome.After, "wait")
	if w.record == "" {
		assert.Nil(t, d.Record, "record")
	} else if assert.NotNil(t, d.Record, "record") {
		assert.Equal(t, w.record, d.Record.Provider.ID)
		assert.Equal(t, "team-a/kfp", d.Record.Provider.Name)
	}
}

func TestDecideSync(t *testing.T) {
	False, True, Unknown := metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionUnknown
	for _, tc := range []struct {
		name string
		o    Observation
		want want
	}{{
		name: "a new resource starts its create as run 1",
		o:    observation(nil),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing,
			state: pipelinesv1beta1.StateCreating, message: []string{"is running (version v2)"}},
	}, {
		name: "the provider cannot change once synchronised",
		o: observation(func(o *Observation) {
			o.Status.Provider = pipelinesv1beta1.ProviderAndID{Name: "team-a/old", ID: "p-1"}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonProviderChanged, state: pipelinesv1beta1.StateFailed,
			message: []string{"was team-a/old and is now team-a/kfp"}, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a missing provider stalls until it appears",
		o:    observation(func(o *Observation) { o.Provider = nil }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonProviderNotFound, message: []string{"team-a/kfp does not exist"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a provider of another namespace must admit this one",
		o:    observation(func(o *Observation) { o.Namespace = "team-b" }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonNamespaceNotAllowed, message: []string{"does not admit namespace team-b"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a provider admitting every namespace serves another",
		o:    observation(func(o *Observation) { o.Namespace, o.Provider = "team-b", readyProvider("*") }),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "a provider not Ready keeps the resource waiting, Ready unknown",
		o:    observation(func(o *Observation) { o.Provider = notReadyProvider() }),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProviderNotReady, state: pipelinesv1beta1.StateCreating,
			message: []string{"is not Ready: image not resolvable"}},
	}, {
		name: "a spec the provider cannot serve stalls",
		o:    observation(func(o *Observation) { o.VersionErr = errors.New("spec.framework.name: no framework \"tfx\"") }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonInvalidSpec, message: []string{"no framework"}, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a run created but not yet cached: wait a moment, write nothing",
		o:    observation(func(o *Observation) { o.AwaitingCache = true }),
		want: want{outcome: outcome.Waiting, after: time.Second},
	}, {
		name: "a running create is reported, nothing started",
		o:    observation(func(o *Observation) { o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2")} }),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing, message: []string{"run-create-v2-1 is running"}},
	}, {
		name: "a succeeded create at the current version is synchronised",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", succeededAt("p-1", time.Minute))}
		}),
		want: want{ready: True, reason: pipelinesv1beta1.ReasonSynchronized, state: pipelinesv1beta1.StateSucceeded,
			message: []string{"version v2 synchronised", "id p-1"}, observed: true, record: "p-1"},
	}, {
		name: "a new version updates the recorded id",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v1", succeededAt("p-1", time.Minute))}
		}),
		want: want{action: StartRun, op: contract.OperationUpdate, version: "v2", ordinal: 2, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing,
			state: pipelinesv1beta1.StateUpdating, record: "p-1"},
	}, {
		name: "a create-only kind is synchronised once created, whatever its version",
		o: observation(func(o *Observation) {
			o.Traits.CreateOnly = true
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v1", succeededAt("r-1", time.Minute))}
		}),
		want: want{ready: True, reason: pipelinesv1beta1.ReasonSynchronized, message: []string{"created in provider team-a/kfp (id r-1)"},
			observed: true, record: "r-1"},
	}, {
		name: "a status naming an id at the current version with no run recording it is not synchronised",
		o: observation(func(o *Observation) {
			o.Status.Provider, o.Status.Version = pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "p-1"}, "v2"
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonBackendRecordMissing, message: []string{`"p-1"`, "no PipelineRun of this resource"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a create-only kind whose status alone names an id was never created",
		o: observation(func(o *Observation) {
			o.Traits.CreateOnly = true
			o.Status.Provider, o.Status.Version = pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "forged"}, "v2"
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonBackendRecordMissing, message: []string{`"forged"`},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "an id only the status names is never updated",
		o: observation(func(o *Observation) {
			o.Status.Provider, o.Status.Version = pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "other-team-pipeline"}, "v1"
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonBackendRecordMissing, message: []string{`"other-team-pipeline"`, "no PipelineRun of this resource"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a failed create waits out its backoff, saying why it failed",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", failedAt("provider error: quota", 4*time.Second))}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunFailed, state: pipelinesv1beta1.StateFailed,
			message: []string{"provider error: quota", "attempt 1; retrying in 6s"}, outcome: outcome.Waiting, after: 6 * time.Second},
	}, {
		name: "after the backoff the next attempt starts, naming the previous failure",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", failedAt("provider error: quota", 11*time.Second))}
		}),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 2, attempt: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing,
			message: []string{"attempt 2; the previous one: provider error: quota"}},
	}, {
		name: "the backoff doubles per failure",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", failedAt("a", time.Hour)), run(2, contract.OperationCreate, "v2", failedAt("b", 15*time.Second))}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunFailed, message: []string{"b (attempt 2; retrying in 5s)"},
			outcome: outcome.Waiting, after: 5 * time.Second},
	}, {
		name: "failures of an earlier version do not delay a new one",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v1", failedAt("a", time.Second))}
		}),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 2, attempt: 0, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "an older failed run pruned: the next attempt takes a new name, not the newest run's",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(2, contract.OperationCreate, "v2", failedAt("b", time.Hour))} // run 1 was pruned
		}),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 3, attempt: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "a running retry says which attempt it is and why the last failed",
		o: observation(func(o *Observation) {
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", failedAt("provider error: quota", time.Hour)), run(2, contract.OperationCreate, "v2")}
		}),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing, message: []string{"attempt 2; the previous one: provider error: quota"}},
	}, {
		name: "an operator without a helper image cannot start runs",
		o:    observation(func(o *Observation) { o.HelperConfigured = false }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonOperatorMisconfigured, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a Run naming a Pipeline that does not exist stalls, creating nothing",
		o:    observation(func(o *Observation) { o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true} }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineNotFound, message: []string{"pipeline team-a/penguin does not exist"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a Pipeline not yet synchronised keeps the Run waiting",
		o: observation(func(o *Observation) {
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true, Found: true, Why: "Progressing: compiling"}
		}),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonPipelineNotReady, state: pipelinesv1beta1.StateCreating,
			message: []string{"waiting for pipeline team-a/penguin to be synchronised (Progressing: compiling)"}},
	}, {
		name: "the newest version must be synchronised before a floating reference runs",
		o: observation(func(o *Observation) {
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true, Found: true, ID: "p-1", Provider: "team-a/kfp", Version: "v1"}
		}),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonPipelineNotReady},
	}, {
		name: "a pinned version the backend holds runs while the Pipeline compiles a newer one",
		o: observation(func(o *Observation) {
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Found: true, ID: "p-1", Provider: "team-a/kfp", Version: "v1"}
		}),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "a Pipeline in another provider's backend cannot run",
		o: observation(func(o *Observation) {
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true, Found: true, Ready: true, ID: "p-1", Provider: "team-a/other", Version: "v1"}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineProviderMismatch, message: []string{"synchronised with provider team-a/other, not team-a/kfp"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a synchronised Pipeline lets the Run start",
		o: observation(func(o *Observation) {
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true, Found: true, Ready: true, ID: "p-1", Provider: "team-a/kfp", Version: "v1"}
		}),
		want: want{action: StartRun, op: contract.OperationCreate, version: "v2", ordinal: 1, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "a created Run does not care what became of its Pipeline",
		o: observation(func(o *Observation) {
			o.Traits.CreateOnly = true
			o.Pipeline = &PipelineView{Namespace: "team-a", Name: "penguin", Floating: true}
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", succeededAt("r-1", time.Minute))}
		}),
		want: want{ready: True, reason: pipelinesv1beta1.ReasonSynchronized, observed: true, record: "r-1"},
	}} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.want, decide(tc.o)) })
	}
}

// TestAnotherNamespacesProviderRevealsNothing: a namespace a Provider does
// not admit reads the same answer whether or not the Provider exists.
func TestAnotherNamespacesProviderRevealsNothing(t *testing.T) {
	missing := decide(observation(func(o *Observation) { o.Namespace, o.Provider = "team-b", nil }))
	refusing := decide(observation(func(o *Observation) { o.Namespace = "team-b" }))
	if missing.Report == nil || refusing.Report == nil {
		t.Fatalf("no report: missing %+v, refusing %+v", missing, refusing)
	}
	if *missing.Report != *refusing.Report || missing.Outcome != refusing.Outcome {
		t.Errorf("a missing Provider reads\n  %+v\nand one not admitting the namespace\n  %+v", *missing.Report, *refusing.Report)
	}
	own := decide(observation(func(o *Observation) { o.Provider = nil }))
	if own.Report == nil || own.Report.Reason != pipelinesv1beta1.ReasonProviderNotFound {
		t.Errorf("a missing Provider of the resource's own namespace is not found: %+v", own.Report)
	}
}

func TestDecideDeletion(t *testing.T) {
	False, Unknown := metav1.ConditionFalse, metav1.ConditionUnknown
	deleting := func(change func(*Observation)) Observation {
		return observation(func(o *Observation) {
			o.Deleting, o.Version = true, ""
			if change != nil {
				change(o)
			}
		})
	}
	created := run(1, contract.OperationCreate, "v2", succeededAt("p-1", time.Hour))
	for _, tc := range []struct {
		name string
		o    Observation
		want want
	}{{
		name: "a synchronised resource is deleted from the backend at its recorded version",
		o:    deleting(func(o *Observation) { o.Runs = []*RunRecord{created} }),
		want: want{action: StartRun, op: contract.OperationDelete, version: "v2", ordinal: 2, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing,
			state: pipelinesv1beta1.StateDeleting, record: "p-1"},
	}, {
		name: "a create just started and not yet in view holds the deletion",
		o:    deleting(func(o *Observation) { o.AwaitingCache = true }),
		want: want{outcome: outcome.Waiting, after: time.Second},
	}, {
		name: "a resource whose workflow namespace is being deleted goes without a backend delete, whatever it recorded",
		o: deleting(func(o *Observation) {
			o.Runs, o.WorkflowNamespaceTerminating = []*RunRecord{created}, true
			o.Status.Provider = pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "p-1"}
		}),
		want: want{action: Release},
	}, {
		name: "a resource never created goes at once",
		o:    deleting(nil),
		want: want{action: Release},
	}, {
		name: "a status naming an id no run recorded is never deleted in the backend",
		o: deleting(func(o *Observation) {
			o.Status.Provider = pipelinesv1beta1.ProviderAndID{Name: "team-a/kfp", ID: "other-team-pipeline"}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonBackendRecordMissing,
			message: []string{`"other-team-pipeline"`, pipelinesv1beta1.AnnotationSkipBackendDeletion}, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a provider that does not admit the namespace deletes nothing for it",
		o: deleting(func(o *Observation) {
			o.Namespace = "team-b"
			o.Runs = []*RunRecord{created}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonNamespaceNotAllowed, message: []string{"cannot delete", "team-b"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "a deleted provider holds the resource, naming the way out, and is looked for again",
		o:    deleting(func(o *Observation) { o.Provider, o.Runs = nil, []*RunRecord{created} }),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonProviderNotFound, message: []string{pipelinesv1beta1.AnnotationSkipBackendDeletion},
			observed: true, outcome: outcome.Waiting, after: 30 * time.Second},
	}, {
		name: "a provider not Ready holds the delete",
		o:    deleting(func(o *Observation) { o.Provider, o.Runs = notReadyProvider(), []*RunRecord{created} }),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProviderNotReady, state: pipelinesv1beta1.StateDeleting},
	}, {
		name: "a provider being deleted that waits for its users still deletes them from the backend",
		o: deleting(func(o *Observation) {
			o.Provider, o.Runs = readyProvider(), []*RunRecord{created}
			o.Provider.Status.Conditions[0].Status = metav1.ConditionFalse
			o.Provider.Status.Conditions[0].Reason = pipelinesv1beta1.ReasonProviderInUse
		}),
		want: want{action: StartRun, op: contract.OperationDelete, version: "v2", ordinal: 2, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing,
			state: pipelinesv1beta1.StateDeleting, record: "p-1"},
	}, {
		name: "a running delete is waited for",
		o:    deleting(func(o *Observation) { o.Runs = []*RunRecord{created, run(2, contract.OperationDelete, "v2")} }),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing, state: pipelinesv1beta1.StateDeleting, message: []string{"run-delete-v2-2 is running"}},
	}, {
		name: "a succeeded delete releases the resource",
		o: deleting(func(o *Observation) {
			o.Runs = []*RunRecord{created, run(2, contract.OperationDelete, "v2", succeededAt("", time.Second))}
		}),
		want: want{action: Release},
	}, {
		name: "a failed delete is retried after the backoff",
		o: deleting(func(o *Observation) {
			o.Runs = []*RunRecord{created, run(2, contract.OperationDelete, "v2", failedAt("provider error: 503", 2*time.Second))}
		}),
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunFailed, message: []string{"provider error: 503", "retrying in 8s"},
			outcome: outcome.Waiting, after: 8 * time.Second, record: "p-1"},
	}, {
		name: "the annotation releases a resource without a backend delete",
		o: deleting(func(o *Observation) {
			o.SkipBackendDeletion = true
			o.Runs = []*RunRecord{created}
		}),
		want: want{action: Release},
	}, {
		name: "the annotation releases a resource whose create is pending, cancelling it",
		o: deleting(func(o *Observation) {
			o.SkipBackendDeletion = true
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2")}
		}),
		want: want{action: CancelAndRelease},
	}, {
		name: "a running create is waited for: its result may be an id the backend holds",
		o:    deleting(func(o *Observation) { o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2")} }),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing, state: pipelinesv1beta1.StateDeleting,
			message: []string{"waiting for PipelineRun team-a/run-create-v2-1 to end"}},
	}, {
		name: "a running Run is cancelled, then waited for",
		o: deleting(func(o *Observation) {
			o.Traits.CancelOnDelete = true
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2")}
		}),
		want: want{action: Cancel, ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}, {
		name: "a cancelled Run is not cancelled again",
		o: deleting(func(o *Observation) {
			o.Traits.CancelOnDelete = true
			o.Runs = []*RunRecord{run(1, contract.OperationCreate, "v2", cancelled)}
		}),
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonProgressing},
	}} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.want, decide(tc.o)) })
	}
}

func TestNotStarted(t *testing.T) {
	False := metav1.ConditionFalse
	o := observation(nil)
	started := decide(o)
	pr := schema.GroupResource{Group: "tekton.dev", Resource: "pipelineruns"}
	for _, tc := range []struct {
		name string
		err  error
		want want
	}{{
		name: "a malformed artifact repository is looked at again (ConfigMaps are not watched)",
		err:  &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, "key default: s3.bucket is required"},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonArtifactRepoInvalid, outcome: outcome.Waiting, after: 30 * time.Second},
	}, {
		name: "a spec too large for a step's environment stalls",
		err:  &specError{errors.New("the resource passed to the provider would be 200000 bytes")},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonInvalidSpec, message: []string{"200000 bytes"}, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a run etcd refuses as too large stalls with the API server's words",
		err:  &createRefusal{"team-a", "pipeline-x", apierrors.NewInternalError(errors.New("etcdserver: request is too large"))},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunNotCreated, message: []string{"team-a/pipeline-x", "request is too large"},
			observed: true, outcome: outcome.Stalled},
	}, {
		name: "an invalid run stalls with the API server's words",
		err:  &createRefusal{"team-a", "pipeline-x", apierrors.NewInvalid(schema.GroupKind{Group: "tekton.dev", Kind: "PipelineRun"}, "pipeline-x", nil)},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunNotCreated, observed: true, outcome: outcome.Stalled},
	}, {
		name: "a name taken by a run not made for this resource is reported and looked at again (nothing watches it)",
		err:  &createRefusal{"team-a", "pipeline-x", apierrors.NewAlreadyExists(pr, "pipeline-x")},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunNotCreated, outcome: outcome.Waiting, after: 30 * time.Second},
	}, {
		name: "a terminating namespace is reported and retried",
		err: &createRefusal{"team-a", "pipeline-x", apierrors.NewForbidden(pr, "pipeline-x",
			errors.New("unable to create new content in namespace team-a because it is being terminated"))},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonPipelineRunNotCreated, message: []string{"being terminated"}, outcome: outcome.Transient},
	}, {
		name: "a build failure is the operator's bug, not the user's spec",
		err:  &internalError{errors.New("no create operation for kind pipeline")},
		want: want{ready: False, reason: pipelinesv1beta1.ReasonInternalError, message: []string{"a bug"}, observed: true, outcome: outcome.Stalled},
	}, {
		name: "anything else is retried without touching the status",
		err:  errors.New("connection refused"),
		want: want{outcome: outcome.Transient},
	}} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.want, notStarted(o, started, tc.err)) })
	}
}

func TestPinnedSpecMatchesFrameworksByName(t *testing.T) {
	p := &pipelinesv1beta1.Provider{
		Spec: pipelinesv1beta1.ProviderSpec{Image: "provider:v1", Frameworks: []pipelinesv1beta1.Framework{
			{Name: "tfx", Image: "tfx:v1"}, {Name: "kfp", Image: "kfp:v1"}}},
		Status: pipelinesv1beta1.ProviderStatus{Image: "provider@sha256:p", Frameworks: []pipelinesv1beta1.Framework{
			{Name: "kfp", Image: "kfp@sha256:k"}, {Name: "tfx", Image: "tfx@sha256:t"}}},
	}
	got := pinnedSpec(p)
	assert.Equal(t, "provider@sha256:p", got.Image)
	assert.Equal(t, []pipelinesv1beta1.Framework{{Name: "tfx", Image: "tfx@sha256:t"}, {Name: "kfp", Image: "kfp@sha256:k"}}, got.Frameworks)
	assert.Equal(t, "tfx:v1", p.Spec.Frameworks[0].Image, "the Provider itself is not changed")
}

// What a provider reads of its Provider: executionMode "" (kfp-operator's)
// as the default, and none of the provider service's pod settings.
func TestPinnedSpecNormalisesExecutionModeAndLeavesOutPodSettings(t *testing.T) {
	p := &pipelinesv1beta1.Provider{
		Spec: pipelinesv1beta1.ProviderSpec{ServiceImage: "svc:v1", ExecutionMode: "",
			PodTemplateEnv:          []corev1.EnvVar{{Name: "TOKEN", Value: "s3cr3t"}},
			PodTemplateVolumes:      []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			PodTemplateVolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}},
		Status: pipelinesv1beta1.ProviderStatus{ServiceImage: "svc@sha256:s"},
	}
	got := pinnedSpec(p)
	assert.Equal(t, pipelinesv1beta1.ExecutionModeV2, got.ExecutionMode)
	assert.Nil(t, got.PodTemplateEnv)
	assert.Nil(t, got.PodTemplateVolumes)
	assert.Nil(t, got.PodTemplateVolumeMounts)
	assert.Equal(t, "svc@sha256:s", got.ServiceImage)
	assert.Len(t, p.Spec.PodTemplateEnv, 1, "the Provider itself is not changed")
	p.Spec.ExecutionMode = pipelinesv1beta1.ExecutionModeV1
	assert.Equal(t, pipelinesv1beta1.ExecutionModeV1, pinnedSpec(p).ExecutionMode)
}

func TestOnlyUsersChanged(t *testing.T) {
	old := readyProvider()
	old.ResourceVersion = "1"
	users := old.DeepCopy()
	users.ResourceVersion = "2"
	users.Status.Users = []pipelinesv1beta1.ProviderUsers{{Kind: "Pipeline", Count: 3}}
	assert.True(t, onlyUsersChanged(old, users), "a users count alone wakes nobody")
	notReady := users.DeepCopy()
	notReady.Status.Conditions[0].Status = metav1.ConditionFalse
	assert.False(t, onlyUsersChanged(old, notReady), "readiness wakes the users")
	spec := users.DeepCopy()
	spec.Spec.AllowedNamespaces = []string{"team-b"}
	assert.False(t, onlyUsersChanged(old, spec), "a spec change wakes the users")
}

func TestQueued(t *testing.T) {
	Unknown := metav1.ConditionUnknown
	record := []*RunRecord{run(1, contract.OperationCreate, "v1", succeededAt("pipeline-7", time.Hour))}
	for _, tc := range []struct {
		name   string
		change func(*Observation)
		want   want
	}{{
		name: "a create waits Creating, looked at again only if no wake-up comes",
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonQueued, state: pipelinesv1beta1.StateCreating,
			message: []string{"provider team-a/kfp has as many operations in flight as it may have now (maxOperationsInFlight, 200", "this create starts when one of them ends"},
			outcome: outcome.Waiting, after: queuedRecheck},
	}, {
		name:   "an update waits Updating, keeping the backend record",
		change: func(o *Observation) { o.Runs = record },
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonQueued, state: pipelinesv1beta1.StateUpdating,
			message: []string{"this update starts"}, record: "pipeline-7", outcome: outcome.Waiting, after: queuedRecheck},
	}, {
		name:   "a delete waits Deleting",
		change: func(o *Observation) { o.Deleting, o.Runs = true, record },
		want: want{ready: Unknown, reason: pipelinesv1beta1.ReasonQueued, state: pipelinesv1beta1.StateDeleting,
			message: []string{"this delete starts"}, record: "pipeline-7", outcome: outcome.Waiting, after: queuedRecheck},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o := observation(tc.change)
			started := decide(o)
			if !assert.Equal(t, StartRun, started.Action.Kind) {
				return
			}
			d := waitForRoom(o, started, 200)
			assert.Equal(t, Nothing, d.Action.Kind, "no run is started")
			check(t, tc.want, d)
			assert.Equal(t, d.Report, waitForRoom(o, started, 200).Report, "the same message at every look: waiting writes nothing")
		})
	}
}

func TestMayHaveCreated(t *testing.T) {
	pr := schema.GroupResource{Group: "tekton.dev", Resource: "pipelineruns"}
	refused := func(err error) error { return &createRefusal{"team-a", "pipeline-x", err} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a malformed artifact repository: never sent", &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, "bad"}, false},
		{"a spec that cannot be served: never sent", &specError{errors.New("too large")}, false},
		{"a build failure: never sent", &internalError{errors.New("bug")}, false},
		{"invalid: refused", refused(apierrors.NewInvalid(schema.GroupKind{Group: "tekton.dev", Kind: "PipelineRun"}, "pipeline-x", nil)), false},
		{"forbidden: refused", refused(apierrors.NewForbidden(pr, "pipeline-x", errors.New("being terminated"))), false},
		{"too many requests: refused", refused(apierrors.NewTooManyRequests("slow down", 1)), false},
		{"the name is another's run: ours was not made", refused(apierrors.NewAlreadyExists(pr, "pipeline-x")), false},
		{"a timeout: the answer may be lost", refused(apierrors.NewTimeoutError("timed out", 1)), true},
		{"an internal error: the answer may be lost", refused(apierrors.NewInternalError(errors.New("etcd leader changed"))), true},
		{"no answer at all", refused(errors.New("connection reset by peer")), true},
		{"ours, but reading it failed", errors.New("reading PipelineRun team-a/pipeline-x whose name is taken: timeout"), true},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, mayHaveCreated(tc.err)) })
	}
}
