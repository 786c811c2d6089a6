//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPodSecurityNeedsTektonSecurityContext proves on the node what the
// Provider's PodSecurityIncompatible condition claims: in a namespace that
// enforces `restricted`, Tekton's set-security-context flag decides whether
// any TaskRun's pod is admitted at all; and the Provider says so instead of
// every resource failing with a Pod Security message.
func TestPodSecurityNeedsTektonSecurityContext(t *testing.T) {
	ns := namespace(t, "e2e-podsecurity")
	installProvider(t, ns, "kfp")
	// Tekton's flag is the cluster's: whatever else runs in a `restricted`
	// namespace (make demo's team-a) has its pods refused until it is back
	// to what it was.
	was := securityContextFlag(t)
	setFlag(t, "false")
	t.Cleanup(func() { setFlag(t, was) })

	refused := taskRun(t, ns, "flag-off")
	waitFor(t, 2*time.Minute, "the TaskRun refused by Pod Security", func() (bool, string) {
		return taskRunDone(t, refused)
	})
	if ok, msg := taskRunSucceeded(t, refused); ok || !strings.Contains(msg, "prepare") {
		t.Fatalf("with set-security-context off, want Tekton's prepare init container refused; got: %s", msg)
	}
	// The Provider says why (an annotation change makes it look again now).
	patch(t, "Provider", ns, "kfp", `{"metadata":{"annotations":{"e2e/poke":"1"}}}`)
	waitFor(t, time.Minute, "Provider PodSecurityIncompatible", func() (bool, string) {
		s, r, m := condition(get(t, "Provider", ns, "kfp"), "Ready")
		return s == "False" && r == "PodSecurityIncompatible" && strings.Contains(m, "set-security-context"), fmt.Sprintf("Ready=%s %s: %s", s, r, m)
	})

	setFlag(t, "true")
	admitted := taskRun(t, ns, "flag-on")
	waitFor(t, 2*time.Minute, "the TaskRun done", func() (bool, string) { return taskRunDone(t, admitted) })
	if ok, msg := taskRunSucceeded(t, admitted); !ok {
		t.Fatalf("with set-security-context on, want the TaskRun to succeed; got: %s", msg)
	}
	patch(t, "Provider", ns, "kfp", `{"metadata":{"annotations":{"e2e/poke":"2"}}}`)
	waitFor(t, time.Minute, "Provider Ready again", func() (bool, string) { return readyIs(get(t, "Provider", ns, "kfp"), "True") })
}

var featureFlags = client.ObjectKey{Namespace: "tekton-pipelines", Name: "feature-flags"}

// securityContextFlag is Tekton's set-security-context flag as it is set ("" unset).
func securityContextFlag(t *testing.T) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := cl.Get(context.Background(), featureFlags, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["set-security-context"]
}

// setFlag sets Tekton's set-security-context flag ("": unset).
func setFlag(t *testing.T, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := cl.Get(context.Background(), featureFlags, cm); err != nil {
		t.Fatal(err)
	}
	base := cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["set-security-context"] = value
	if value == "" {
		delete(cm.Data, "set-security-context")
	}
	if err := cl.Patch(context.Background(), cm, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // Tekton's controller watches its ConfigMaps; let it see the change.
}

// taskRun creates a TaskRun whose one step satisfies `restricted` itself:
// only Tekton's own containers can make it refused.
func taskRun(t *testing.T, ns, name string) *tektonv1.TaskRun {
	t.Helper()
	tr := &tektonv1.TaskRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: tektonv1.TaskRunSpec{
			ServiceAccountName: "kfp-provider",
			TaskSpec: &tektonv1.TaskSpec{Steps: []tektonv1.Step{{
				Name: "hello", Image: images["FIXTURE_COMPILER_IMAGE"], Command: []string{"/compiler"}, Args: []string{"/tmp/out"},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}}},
		},
	}
	if err := cl.Create(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func taskRunDone(t *testing.T, tr *tektonv1.TaskRun) (bool, string) {
	got := &tektonv1.TaskRun{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(tr), got); err != nil {
		return false, err.Error()
	}
	return got.IsDone(), fmt.Sprintf("%v", got.Status.Conditions)
}

func taskRunSucceeded(t *testing.T, tr *tektonv1.TaskRun) (bool, string) {
	got := &tektonv1.TaskRun{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(tr), got); err != nil {
		t.Fatal(err)
	}
	c := got.Status.GetCondition("Succeeded")
	if c == nil {
		return false, "no Succeeded condition"
	}
	return c.IsTrue(), c.Reason + ": " + c.Message
}
