package seal

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// owner names the resource a record belongs to, its UID included: a record
// copied to another resource, or to one recreated under the same name,
// does not verify there.
func owner(kind string, obj metav1.Object) []string {
	return []string{kind, obj.GetNamespace(), obj.GetName(), string(obj.GetUID())}
}

// seconds is t as the API server stores it (RFC 3339, whole seconds).
func seconds(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// eventFields are what a pending completion event's seal covers: all but
// the sinks still owed it, which shrink as they take it.
func eventFields(kind string, obj metav1.Object, ev *pipelinesv1beta1.PendingCompletionEvent) []string {
	return append(owner(kind, obj), ev.ID, ev.Source, seconds(&ev.Time), ev.Data)
}

// SealEvent seals ev, pending in the outbox of obj (of kind).
func (k *Key) SealEvent(kind string, obj metav1.Object, ev *pipelinesv1beta1.PendingCompletionEvent) {
	ev.Seal = k.Seal(CompletionEvent, eventFields(kind, obj, ev)...)
}

// EventSealed says whether the operator wrote ev into obj's outbox.
func (k *Key) EventSealed(kind string, obj metav1.Object, ev *pipelinesv1beta1.PendingCompletionEvent) bool {
	return k.Verify(ev.Seal, CompletionEvent, eventFields(kind, obj, ev)...)
}

func latestFields(rc *pipelinesv1beta1.RunConfiguration, ref *pipelinesv1beta1.RunReference) []string {
	fields := append(owner("RunConfiguration", rc), ref.ProviderID, seconds(ref.CompletedAt))
	for _, a := range ref.Artifacts {
		fields = append(fields, a.Name, a.Location)
	}
	return fields
}

// SealLatest seals ref as rc's latest succeeded run.
func (k *Key) SealLatest(rc *pipelinesv1beta1.RunConfiguration, ref *pipelinesv1beta1.RunReference) {
	ref.Seal = k.Seal(LatestSucceeded, latestFields(rc, ref)...)
}

// Latest is rc's latest succeeded run if the operator recorded it, else
// nil (none, or one someone else wrote).
func (k *Key) Latest(rc *pipelinesv1beta1.RunConfiguration) *pipelinesv1beta1.RunReference {
	ref := rc.Status.LatestRuns.Succeeded
	if ref == nil || !k.Verify(ref.Seal, LatestSucceeded, latestFields(rc, ref)...) {
		return nil
	}
	return ref
}

// Forged says whether rc names a latest succeeded run the operator did not
// record.
func (k *Key) Forged(rc *pipelinesv1beta1.RunConfiguration) bool {
	return rc.Status.LatestRuns.Succeeded != nil && k.Latest(rc) == nil
}
