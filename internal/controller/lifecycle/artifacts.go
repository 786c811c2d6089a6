package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Argo-compatible names (seed 003): a namespace's artifact repositories live
// in this ConfigMap; the annotation picks the default key.
const (
	ArtifactRepositoriesConfigMap = "artifact-repositories"
	AnnotationDefaultArtifactRepo = "workflows.argoproj.io/default-artifact-repository"
)

// ArtifactLocation is where a resource's artifacts go (the contract's type).
type ArtifactLocation = contract.ArtifactLocation

// resolveArtifacts applies DESIGN §6: the resource's explicit ref, then its
// namespace's artifact-repositories default, then the Provider's
// artifactRepository, then the Provider's pipelineRootStorage. A malformed
// ConfigMap is a problem naming the key; an absent one falls through.
func resolveArtifacts(ctx context.Context, c client.Reader, namespace string, explicit *pipelinesv1beta1.ArtifactRepositoryRef,
	p *pipelinesv1beta1.Provider) (*ArtifactLocation, error) {
	if explicit != nil {
		name := explicit.ConfigMap
		if name == "" {
			name = ArtifactRepositoriesConfigMap
		}
		loc, found, err := fromConfigMap(ctx, c, namespace, name, explicit.Key)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid,
				fmt.Sprintf("spec.artifactRepositoryRef: ConfigMap %s/%s does not exist", namespace, name)}
		}
		loc.Source = "resource"
		return loc, nil
	}
	loc, found, err := fromConfigMap(ctx, c, namespace, ArtifactRepositoriesConfigMap, "")
	if err != nil {
		return nil, err
	}
	if found {
		loc.Source = "namespace"
		return loc, nil
	}
	if p.Spec.ArtifactRepository != nil {
		loc, err := locate(*p.Spec.ArtifactRepository)
		if err != nil {
			return nil, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf("provider %s/%s spec.artifactRepository: %v", p.Namespace, p.Name, err)}
		}
		loc.Source = "provider"
		return loc, nil
	}
	if p.Spec.PipelineRootStorage != "" {
		return &ArtifactLocation{Source: "pipelineRootStorage", Location: p.Spec.PipelineRootStorage}, nil
	}
	return nil, nil
}

// fromConfigMap reads key (or the default key) of an Argo-format ConfigMap.
// found is false when the ConfigMap does not exist.
func fromConfigMap(ctx context.Context, c client.Reader, namespace, name, key string) (*ArtifactLocation, bool, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, name, err)
	}
	where := fmt.Sprintf("ConfigMap %s/%s", namespace, name)
	if key == "" {
		key = cm.Annotations[AnnotationDefaultArtifactRepo]
	}
	if key == "" {
		keys := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) != 1 {
			return nil, true, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf(
				"%s has no annotation %s naming the default among its keys %v", where, AnnotationDefaultArtifactRepo, keys)}
		}
		key = keys[0]
	}
	raw, ok := cm.Data[key]
	if !ok {
		return nil, true, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf("%s has no key %q", where, key)}
	}
	var repo pipelinesv1beta1.ArtifactRepository
	if err := yaml.Unmarshal([]byte(raw), &repo); err != nil {
		return nil, true, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf("%s key %q is not valid YAML: %v", where, key, err)}
	}
	loc, err := locate(repo)
	if err != nil {
		return nil, true, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf("%s key %q: %v", where, key, err)}
	}
	loc.Ref = &contract.ConfigMapKeyRef{Name: name, Key: key}
	return loc, true, nil
}

// locate turns one repository configuration into a location.
func locate(repo pipelinesv1beta1.ArtifactRepository) (*ArtifactLocation, error) {
	switch {
	case repo.S3 != nil && repo.GCS != nil:
		return nil, fmt.Errorf("both s3 and gcs are set; set one")
	case repo.S3 != nil:
		s := repo.S3
		if s.Bucket == "" {
			return nil, fmt.Errorf("s3.bucket is required")
		}
		loc := &ArtifactLocation{Location: "s3://" + join(s.Bucket, prefix(s.KeyPrefix, s.KeyFormat)),
			Endpoint: s.Endpoint, Region: s.Region, Insecure: s.Insecure}
		if s.AccessKeySecret != nil {
			loc.Secrets = append(loc.Secrets, contract.SecretKeyRef{Purpose: "accessKey", Name: s.AccessKeySecret.Name, Key: s.AccessKeySecret.Key})
		}
		if s.SecretKeySecret != nil {
			loc.Secrets = append(loc.Secrets, contract.SecretKeyRef{Purpose: "secretKey", Name: s.SecretKeySecret.Name, Key: s.SecretKeySecret.Key})
		}
		return loc, nil
	case repo.GCS != nil:
		g := repo.GCS
		if g.Bucket == "" {
			return nil, fmt.Errorf("gcs.bucket is required")
		}
		loc := &ArtifactLocation{Location: "gs://" + join(g.Bucket, prefix(g.KeyPrefix, g.KeyFormat))}
		if g.ServiceAccountKeySecret != nil {
			loc.Secrets = append(loc.Secrets, contract.SecretKeyRef{Purpose: "serviceAccountKey", Name: g.ServiceAccountKeySecret.Name, Key: g.ServiceAccountKeySecret.Key})
		}
		return loc, nil
	}
	return nil, fmt.Errorf("no supported repository (s3 or gcs) is configured")
}

// prefix is keyPrefix, or the static part of an Argo keyFormat (up to its
// first template).
func prefix(keyPrefix, keyFormat string) string {
	if keyPrefix != "" {
		return strings.Trim(keyPrefix, "/")
	}
	static, _, _ := strings.Cut(keyFormat, "{{")
	return strings.Trim(static, "/")
}

func join(bucket, prefix string) string {
	if prefix == "" {
		return bucket
	}
	return bucket + "/" + prefix
}
