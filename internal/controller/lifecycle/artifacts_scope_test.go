package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// The rule: Secrets resolve only in the namespace that owns the
// configuration.
func TestArtifactSecretScope(t *testing.T) {
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "kfp"}}
	secrets := []contract.SecretKeyRef{{Purpose: "accessKey", Name: "minio", Key: "a"}, {Purpose: "secretKey", Name: "minio", Key: "s"}}
	ref := &contract.ConfigMapKeyRef{Name: ArtifactRepositoriesConfigMap, Key: "team"}
	loc := func(source string, secrets []contract.SecretKeyRef) *ArtifactLocation {
		return &ArtifactLocation{Source: source, Location: "s3://b", Secrets: secrets, Ref: ref}
	}
	for _, tc := range []struct {
		name          string
		loc           *ArtifactLocation
		ns, runNS     string
		refused       bool
		wantInMessage []string
	}{
		{name: "no location", loc: nil, ns: "team", runNS: "platform"},
		{name: "same namespace, namespace default with Secrets", loc: loc("namespace", secrets), ns: "platform", runNS: "platform"},
		{name: "same namespace, explicit ref with Secrets", loc: loc("resource", secrets), ns: "platform", runNS: "platform"},
		{name: "workflowNamespace is the resource's namespace", loc: loc("namespace", secrets), ns: "runs", runNS: "runs"},
		{name: "other namespace, no Secrets", loc: loc("namespace", nil), ns: "team", runNS: "platform"},
		{name: "other namespace, explicit ref, no Secrets", loc: loc("resource", nil), ns: "team", runNS: "platform"},
		{name: "other namespace, namespace default with Secrets", loc: loc("namespace", secrets), ns: "team", runNS: "platform", refused: true,
			wantInMessage: []string{`ConfigMap team/artifact-repositories key "team"`, "Secrets [minio]", "namespace platform",
				"only in the namespace that owns the configuration", "without credentials", "spec.artifactRepository", "platform/kfp"}},
		{name: "other namespace, explicit ref with Secrets", loc: loc("resource", secrets), ns: "team", runNS: "platform", refused: true,
			wantInMessage: []string{`spec.artifactRepositoryRef: ConfigMap team/artifact-repositories key "team"`}},
		{name: "same namespace as the Provider but a shared workflowNamespace", loc: loc("namespace", secrets), ns: "platform", runNS: "runs", refused: true,
			wantInMessage: []string{"execute in namespace runs"}},
		{name: "Provider's repository in another run namespace keeps its Secrets", loc: loc("provider", secrets), ns: "team", runNS: "runs"},
		{name: "Provider's repository for another namespace keeps its Secrets", loc: loc("provider", secrets), ns: "team", runNS: "platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := secretScope(tc.loc, tc.ns, tc.runNS, p)
			if !tc.refused {
				assert.NoError(t, err)
				return
			}
			var pr *problem
			require.True(t, errors.As(err, &pr), "a problem, got %v", err)
			assert.Equal(t, pipelinesv1beta1.ReasonArtifactRepoInvalid, pr.reason)
			for _, part := range tc.wantInMessage {
				assert.Contains(t, pr.message, part)
			}
		})
	}
}

// stubConfigMaps serves ConfigMaps from a map, for resolveArtifacts.
type stubConfigMaps map[client.ObjectKey]*corev1.ConfigMap

func (r stubConfigMaps) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	cm, ok := r[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	cm.DeepCopyInto(obj.(*corev1.ConfigMap))
	return nil
}

func (r stubConfigMaps) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not supported")
}

// resolveArtifacts applies the rule to the levels configured in the
// resource's namespace only, in both namespace modes.
func TestArtifactResolutionSecretScope(t *testing.T) {
	withSecret := "s3:\n  bucket: b\n  endpoint: tenant.example:9000\n  accessKeySecret: {name: minio, key: a}\n"
	without := "s3:\n  bucket: open\n  endpoint: tenant.example:9000\n"
	reader := stubConfigMaps{}
	for _, ns := range []string{"team", "platform"} {
		reader[client.ObjectKey{Namespace: ns, Name: ArtifactRepositoriesConfigMap}] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ArtifactRepositoriesConfigMap,
				Annotations: map[string]string{pipelinesv1beta1.AnnotationDefaultArtifactRepository: "default"}},
			Data: map[string]string{"default": withSecret, "open": without}}
	}
	provider := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{ArtifactRepository: &pipelinesv1beta1.ArtifactRepository{S3: &pipelinesv1beta1.S3ArtifactRepository{
			Bucket: "p", AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "platform-minio"}, Key: "a"}}}}}
	open := &pipelinesv1beta1.ArtifactRepositoryRef{Key: "open"}
	ctx := context.Background()

	for _, tc := range []struct {
		name       string
		ns, runNS  string
		explicit   *pipelinesv1beta1.ArtifactRepositoryRef
		refused    bool
		wantSource string
	}{
		{name: "own namespace keeps its Secrets", ns: "platform", runNS: "platform", wantSource: "namespace"},
		{name: "tenant namespace default with Secrets", ns: "team", runNS: "platform", refused: true},
		{name: "tenant explicit ref without Secrets", ns: "team", runNS: "platform", explicit: open, wantSource: "resource"},
		{name: "tenant explicit ref with Secrets", ns: "team", runNS: "platform", explicit: &pipelinesv1beta1.ArtifactRepositoryRef{Key: "default"}, refused: true},
		{name: "Provider's namespace under a workflowNamespace", ns: "platform", runNS: "runs", refused: true},
		{name: "no namespace configuration: the Provider's Secrets", ns: "elsewhere", runNS: "platform", wantSource: "provider"},
		{name: "no namespace configuration, workflowNamespace: the Provider's Secrets", ns: "elsewhere", runNS: "runs", wantSource: "provider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, err := resolveArtifacts(ctx, reader, tc.ns, tc.runNS, tc.explicit, provider)
			if tc.refused {
				var pr *problem
				require.True(t, errors.As(err, &pr), "a problem, got %v", err)
				assert.Equal(t, pipelinesv1beta1.ReasonArtifactRepoInvalid, pr.reason)
				assert.Nil(t, loc)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantSource, loc.Source)
			if tc.wantSource == "provider" {
				assert.Equal(t, []contract.SecretKeyRef{{Purpose: "accessKey", Name: "platform-minio", Key: "a"}}, loc.Secrets)
			}
		})
	}
}
