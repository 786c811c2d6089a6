//go:build e2e

// Package e2e is the end-to-end suite on the local real cluster (DESIGN §9):
// a kubelet runs every operation's pods, the real Tekton controller and
// webhook run the PipelineRuns, and the operator runs in the cluster,
// installed by its own chart. hack/e2e.sh runs it inside the cluster's
// network namespace after `hack/install-operator.sh`.
//
// The provider and compiler here are the contract-test fixtures of
// internal/testfixtures, not the product's backend.
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var (
	cl        client.Client
	clientset kubernetes.Interface // for what client cannot do: logs, tokens
	images    map[string]string
	root      string
)

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	root = filepath.Join(filepath.Dir(file), "..")
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(root, "bin", "kubeconfig"))
	if err != nil {
		return fmt.Errorf("the local cluster's kubeconfig (run hack/e2e.sh): %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	if cl, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	images, err = testenv.Images()
	return err
}

// namespace creates a namespace that enforces Pod Security `restricted`,
// removed when the test ends (unless it failed, to leave it for a look).
func namespace(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   prefix + "-" + hex.EncodeToString(b),
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "e2e": "true"},
	}}
	if err := cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = cl.Delete(context.Background(), ns)
		}
	})
	return ns.Name
}

// installProvider installs a provider with the provider chart: the fixture
// provider image and the fixture compiler as framework "fixture".
func installProvider(t *testing.T, ns, name string, helmArgs ...string) {
	t.Helper()
	run(t, filepath.Join(root, "bin", "helm"), append([]string{"install", name, filepath.Join(root, "config", "helm", "kfp-tekton-provider"),
		"--namespace", ns, "--set", "provider.name=" + name,
		"--set", "provider.image=" + images["FIXTURE_PROVIDER_IMAGE"],
		"--set", "provider.frameworks[0].name=fixture", "--set", "provider.frameworks[0].image=" + images["FIXTURE_COMPILER_IMAGE"]},
		helmArgs...)...)
	waitFor(t, 2*time.Minute, "Provider "+ns+"/"+name+" Ready", func() (bool, string) {
		return readyIs(get(t, "Provider", ns, name), "True")
	})
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var gv = schema.GroupVersion{Group: "pipelines.kubeflow.org", Version: "v1beta1"}

// create creates a pipelines.kubeflow.org object from YAML in ns.
func create(t *testing.T, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if obj.GetAPIVersion() == "" {
		obj.SetAPIVersion(gv.String())
	}
	obj.SetNamespace(ns)
	if err := cl.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	return obj
}

func get(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(kind))
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil
	}
	return obj
}

// patch merges a JSON patch into an object.
func patch(t *testing.T, kind, ns, name, mergePatch string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	if err := cl.Patch(context.Background(), obj, client.RawPatch("application/merge-patch+json", []byte(mergePatch))); err != nil {
		t.Fatalf("patching %s %s/%s: %v", kind, ns, name, err)
	}
}

func remove(t *testing.T, kind, ns, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	if err := cl.Delete(context.Background(), obj); err != nil {
		t.Fatalf("deleting %s %s/%s: %v", kind, ns, name, err)
	}
}

// condition returns the status, reason and message of a condition.
func condition(obj *unstructured.Unstructured, typ string) (status, reason, message string) {
	if obj == nil {
		return "", "", "(not found)"
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", "(no " + typ + " condition)"
}

func readyIs(obj *unstructured.Unstructured, status string) (bool, string) {
	s, r, m := condition(obj, "Ready")
	return s == status, fmt.Sprintf("Ready=%s %s: %s", s, r, m)
}

// synchronised: Ready=True, Synchronized=Succeeded, at the current generation.
func synchronised(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return false, "not found"
	}
	s, r, m := condition(obj, "Ready")
	_, sr, _ := condition(obj, "Synchronized")
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	ok := s == "True" && sr == "Succeeded" && observed == obj.GetGeneration()
	return ok, fmt.Sprintf("Ready=%s %s (%s), Synchronized=%s, observedGeneration %d of %d", s, r, m, sr, observed, obj.GetGeneration())
}

// waitFor polls until cond holds, failing with its last description.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s; last: %s", what, timeout, last)
}

// runsOf lists the PipelineRuns of one resource, by its owner labels.
func runsOf(t *testing.T, ns, kind, name string) []tektonv1.PipelineRun {
	t.Helper()
	list := &tektonv1.PipelineRunList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{
		"pipelines.kubeflow.org/owner.kind": strings.ToLower(kind), "pipelines.kubeflow.org/owner.name": name,
	}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func succeededCondition(pr *tektonv1.PipelineRun) string {
	for _, c := range pr.Status.Conditions {
		if c.Type == "Succeeded" {
			return string(c.Status)
		}
	}
	return "Unknown"
}

// podsOf lists the pods Tekton ran for a PipelineRun.
func podsOf(t *testing.T, ns, pipelineRun string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := cl.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{"tekton.dev/pipelineRun": pipelineRun}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// list lists the objects of a pipelines.kubeflow.org kind in ns.
func list(t *testing.T, ns, kind string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gv.WithKind(kind + "List"))
	if err := cl.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return l.Items
}
