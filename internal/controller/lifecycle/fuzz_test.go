package lifecycle

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// What the API admits for the references (the CEL rules of the
// api/v1beta1 markers; a name is a DNS-1123 subdomain of at most 253
// characters, its length a second pattern as RE2 has no lookahead).
const subdomain = `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`

var (
	providerRefPattern = admitted{regexp.MustCompile(`^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?` + subdomain + `$`), regexp.MustCompile(`^([^/]+/)?[^/]{1,253}$`)}
	pipelineRefPattern = admitted{regexp.MustCompile(`^` + subdomain + `(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$`), regexp.MustCompile(`^[^:]{1,253}(:.*)?$`)}
)

// admitted matches a string when every pattern does.
type admitted []*regexp.Regexp

func (a admitted) MatchString(s string) bool {
	for _, p := range a {
		if !p.MatchString(s) {
			return false
		}
	}
	return true
}

// FuzzProviderKey: a reference splits at its first "/" into what it names;
// the key's String (status.provider.name) reads back as the same key; an
// admitted reference names a valid namespace and name.
func FuzzProviderKey(f *testing.F) {
	for _, s := range []string{
		"kfp", "team-a/kfp", "", "/", "/kfp", "team-a/", "a/b/c", "team-a//kfp", "KFP", "ns/kfp.provider.x",
		strings.Repeat("p", 253), strings.Repeat("n", 64) + "/kfp", "ns/" + strings.Repeat("p", 254), "a:b", "ü/ß",
	} {
		f.Add(s, "team-b")
	}
	f.Fuzz(func(t *testing.T, ref, namespace string) {
		key := pipelinesv1beta1.ProviderKey(pipelinesv1beta1.ProviderReference(ref), namespace)
		if ns, name, ok := strings.Cut(ref, "/"); ok {
			if key != (types.NamespacedName{Namespace: ns, Name: name}) {
				t.Fatalf("pipelinesv1beta1.ProviderKey(%q) = %v", ref, key)
			}
		} else if key != (types.NamespacedName{Namespace: namespace, Name: ref}) {
			t.Fatalf("pipelinesv1beta1.ProviderKey(%q, %q) = %v", ref, namespace, key)
		}
		if !strings.Contains(namespace, "/") {
			if back := pipelinesv1beta1.ProviderKey(pipelinesv1beta1.ProviderReference(key.String()), "elsewhere"); back != key {
				t.Fatalf("status name %q of %v reads back as %v", key.String(), key, back)
			}
		}
		if providerRefPattern.MatchString(ref) && len(validation.IsDNS1123Label(namespace)) == 0 {
			if errs := validation.IsDNS1123Label(key.Namespace); len(errs) > 0 {
				t.Fatalf("admitted %q names namespace %q: %v", ref, key.Namespace, errs)
			}
			if errs := validation.IsDNS1123Subdomain(key.Name); len(errs) > 0 {
				t.Fatalf("admitted %q names provider %q: %v", ref, key.Name, errs)
			}
		}
	})
}

// FuzzObservePipeline: a Pipeline reference reads as name[:version] split
// at the first ":"; a floating one takes the Pipeline's current version, a
// pinned one keeps its own; the id and version come from the Pipeline's own
// run, never its status; never a panic, whatever the text.
func FuzzObservePipeline(f *testing.F) {
	for _, s := range []string{
		"penguin", "penguin:v1", "penguin:", ":v1", ":", "", "penguin:v1:extra", "missing", "missing:v2",
		"Penguin", "a/b", "penguin:" + strings.Repeat("v", 200), strings.Repeat("p", 300), "pen guin:\x00",
	} {
		f.Add(s)
	}
	p := &pipelinesv1beta1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "penguin", Generation: 3},
		Status: pipelinesv1beta1.Status{
			Version: "v7",
			Conditions: []metav1.Condition{{Type: pipelinesv1beta1.ConditionReady, Status: metav1.ConditionTrue,
				ObservedGeneration: 3, Reason: "Synchronized", LastTransitionTime: metav1.Now()}},
		},
	}
	p.UID = "pipeline-uid"
	// The status names one id; the Pipeline's own succeeded run records
	// another: only the recorded one may be used.
	p.Status.Provider = pipelinesv1beta1.ProviderAndID{Name: "team/kfp", ID: "forged-id"}
	recorded := &tektonv1.PipelineRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pipeline-penguin-create", Labels: map[string]string{
			contract.LabelOwnerUID: "pipeline-uid", contract.LabelOperation: string(contract.OperationCreate), contract.LabelVersion: "v6"},
			Annotations: map[string]string{contract.AnnotationProvider: "team/kfp"}},
		Status: tektonv1.PipelineRunStatus{
			Status: duckv1.Status{Conditions: duckv1.Conditions{{Type: apis.ConditionSucceeded, Status: corev1.ConditionTrue}}},
			PipelineRunStatusFields: tektonv1.PipelineRunStatusFields{Results: []tektonv1.PipelineRunResult{
				{Name: taskdef.ResultProviderID, Value: *tektonv1.NewStructuredValues("recorded-id")}}},
		},
	}
	r := &Reconciler[*pipelinesv1beta1.Run]{
		Settings: Settings{Client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(p, recorded).
			WithIndex(&tektonv1.PipelineRun{}, contract.IndexOwnerUID, func(o client.Object) []string { return []string{o.GetLabels()[contract.LabelOwnerUID]} }).
			Build()},
	}
	f.Fuzz(func(t *testing.T, ref string) {
		run := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "r"}}
		run.Spec.Pipeline = pipelinesv1beta1.PipelineReference(ref)
		v, err := r.observePipeline(context.Background(), run, run.Spec.Pipeline)
		if err != nil {
			if pipelineRefPattern.MatchString(ref) {
				t.Fatalf("admitted reference %q: %v", ref, err)
			}
			return
		}
		name, version, pinned := strings.Cut(ref, ":")
		if v.Namespace != "team" || v.Name != name || v.Floating == pinned {
			t.Fatalf("%q read as %+v", ref, v)
		}
		switch {
		case v.Found != (name == p.Name):
			t.Fatalf("%q: found %v", ref, v.Found)
		case pinned && v.Version != version:
			t.Fatalf("%q: version %q, want the pinned %q", ref, v.Version, version)
		case !pinned && v.Found && v.Version != "v6":
			t.Fatalf("%q: version %q, want the one the Pipeline's run recorded", ref, v.Version)
		case v.Found && (!v.Ready || v.ID != "recorded-id" || v.Provider != "team/kfp"):
			t.Fatalf("%q: %+v, want the ready Pipeline with its recorded id (never the status's)", ref, v)
		}
	})
}

// FuzzArtifactRepository: any text under a key of an artifact-repositories
// ConfigMap (and any annotation or requested key) is a location or a
// problem with reason ArtifactRepoInvalid, never a panic; a location names
// an s3:// or gs:// bucket and the key it came from.
func FuzzArtifactRepository(f *testing.F) {
	for _, s := range []string{
		"s3:\n  bucket: b\n  endpoint: minio:9000\n  insecure: true\n  accessKeySecret: {name: minio, key: a}\n  secretKeySecret: {name: minio, key: s}\n",
		"s3:\n  bucket: b\n  keyFormat: \"artifacts/{{workflow.name}}/{{pod.name}}\"\n",
		"gcs:\n  bucket: g\n  keyPrefix: /a/b/\n  serviceAccountKeySecret: {name: sa, key: k}\n",
		"s3: {bucket: b}\ngcs: {bucket: g}\n", "s3: {}\n", "gcs: {bucket: \"\"}\n", "azure: {container: c}\n", "",
		"null", "[]", "s3: [1]\n", "s3: {bucket: 1}\n", "s3:\n  bucket: b\n  accessKeySecret: null\n", "{{", "\x00",
		"s3:\n  bucket: b\n  keyPrefix: \"{{\"\n", "s3: &a {bucket: *a}\n", "s3: {bucket: b, unknown: 1}\n",
	} {
		f.Add(s, "default", "", "")
	}
	f.Add("s3: {bucket: b}\n", "", "default", "")
	f.Add("s3: {bucket: b}\n", "", "", "")
	f.Add("s3: {bucket: b}\n", "", "missing", "")
	f.Add("s3: {bucket: b}\n", "other", "", "")
	f.Fuzz(func(t *testing.T, raw, dataKey, annotation, requested string) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: ArtifactRepositoriesConfigMap},
			Data:       map[string]string{dataKey: raw},
		}
		if annotation != "" {
			cm.Annotations = map[string]string{pipelinesv1beta1.AnnotationDefaultArtifactRepository: annotation}
		}
		reader := stubConfigMaps{client.ObjectKeyFromObject(cm): cm}
		loc, found, err := fromConfigMap(context.Background(), reader, "team", ArtifactRepositoriesConfigMap, requested)
		if !found {
			t.Fatalf("the ConfigMap exists, but found is false (%v)", err)
		}
		if err != nil {
			var pr *problem
			if !errors.As(err, &pr) || pr.reason != pipelinesv1beta1.ReasonArtifactRepoInvalid {
				t.Fatalf("error %v (%T) is not an ArtifactRepoInvalid problem", err, err)
			}
			if loc != nil {
				t.Fatalf("a location beside error %v", err)
			}
			return
		}
		if loc.Ref == nil || loc.Ref.Name != ArtifactRepositoriesConfigMap || loc.Ref.Key != dataKey {
			t.Fatalf("location %+v does not name key %q", loc, dataKey)
		}
		proto, bucket, ok := strings.Cut(loc.Location, "://")
		if !ok || (proto != "s3" && proto != "gs") || bucket == "" {
			t.Fatalf("location %q is not an s3:// or gs:// bucket", loc.Location)
		}
		for _, s := range loc.Secrets {
			if s.Purpose == "" {
				t.Fatalf("secret %+v without a purpose", s)
			}
		}
	})
}
