package seal

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func testKey(t *testing.T, b byte) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{b}, MinKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealVerifies(t *testing.T) {
	k, other := testKey(t, 1), testKey(t, 2)
	fields := []string{"Run", "team-a", "train", "uid-1", "run-7"}
	s := k.Seal(CompletionEvent, fields...)
	for _, c := range []struct {
		name    string
		key     *Key
		seal    string
		purpose Purpose
		fields  []string
		want    bool
	}{
		{"the same record", k, s, CompletionEvent, fields, true},
		{"another key", other, s, CompletionEvent, fields, false},
		{"another purpose", k, s, LatestSucceeded, fields, false},
		{"a field changed", k, s, CompletionEvent, []string{"Run", "team-a", "train", "uid-1", "run-8"}, false},
		{"another resource", k, s, CompletionEvent, []string{"Run", "team-b", "train", "uid-1", "run-7"}, false},
		{"fields joined otherwise", k, s, CompletionEvent, []string{"Run", "team-atrain", "", "uid-1", "run-7"}, false},
		{"a field fewer", k, s, CompletionEvent, fields[:4], false},
		{"empty seal", k, "", CompletionEvent, fields, false},
		{"no version", k, strings.TrimPrefix(s, version), CompletionEvent, fields, false},
		{"not base64", k, version + "!!!", CompletionEvent, fields, false},
		{"truncated", k, s[:len(s)-2], CompletionEvent, fields, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.key.Verify(c.seal, c.purpose, c.fields...); got != c.want {
				t.Errorf("Verify = %v, want %v", got, c.want)
			}
		})
	}
}

func TestShortKeysAreRefused(t *testing.T) {
	if _, err := NewKey(make([]byte, MinKeyBytes-1)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
}

func TestRecordsVerifyOnlyWhereTheyWereSealed(t *testing.T) {
	k := testKey(t, 3)
	rc := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train", UID: "uid-1"}}
	at := metav1.NewTime(time.Date(2026, 12, 6, 4, 5, 6, 789, time.UTC))
	ref := &pipelinesv1beta1.RunReference{ProviderID: "run-1", CompletedAt: &at,
		Artifacts: []pipelinesv1beta1.Artifact{{Name: "model", Location: "s3://bucket/model"}}}
	k.SealLatest(rc, ref)
	rc.Status.LatestRuns.Succeeded = ref
	if k.Latest(rc) == nil || k.Forged(rc) {
		t.Fatal("the sealed latest run does not verify")
	}
	// The API server keeps whole seconds: the seal still verifies.
	stored := metav1.NewTime(at.Truncate(time.Second))
	ref.CompletedAt = &stored
	if k.Latest(rc) == nil {
		t.Error("the latest run read back at whole seconds does not verify")
	}
	for name, change := range map[string]func(*pipelinesv1beta1.RunConfiguration){
		"another location": func(rc *pipelinesv1beta1.RunConfiguration) {
			rc.Status.LatestRuns.Succeeded.Artifacts[0].Location = "s3://attacker/model"
		},
		"another run":      func(rc *pipelinesv1beta1.RunConfiguration) { rc.Status.LatestRuns.Succeeded.ProviderID = "run-2" },
		"recreated":        func(rc *pipelinesv1beta1.RunConfiguration) { rc.UID = "uid-2" },
		"another resource": func(rc *pipelinesv1beta1.RunConfiguration) { rc.Name = "serve" },
		"no seal":          func(rc *pipelinesv1beta1.RunConfiguration) { rc.Status.LatestRuns.Succeeded.Seal = "" },
	} {
		t.Run(name, func(t *testing.T) {
			forged := rc.DeepCopy()
			change(forged)
			if k.Latest(forged) != nil || !k.Forged(forged) {
				t.Error("a changed latest run verifies")
			}
		})
	}

	run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "r", UID: "uid-3"}}
	ev := &pipelinesv1beta1.PendingCompletionEvent{ID: "run-1", Source: "team-a/kfp", Time: at, Data: `{"status":"succeeded"}`, Sinks: []string{"a"}}
	k.SealEvent("Run", run, ev)
	ev.Sinks = nil // delivered to a
	ev.Time = metav1.NewTime(at.Truncate(time.Second))
	if !k.EventSealed("Run", run, ev) {
		t.Error("the sealed event does not verify once delivered to a sink")
	}
	if k.EventSealed("RunConfiguration", run, ev) {
		t.Error("a Run's event verifies as a RunConfiguration's")
	}
	ev.Data = `{"status":"succeeded","servingModelArtifacts":[{"location":"s3://attacker"}]}`
	if k.EventSealed("Run", run, ev) {
		t.Error("an event with other data verifies")
	}
}
