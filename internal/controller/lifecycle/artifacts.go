package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// ArtifactRepositoriesConfigMap is the Argo-compatible name (seed 003) of the
// ConfigMap holding a namespace's artifact repositories; its annotation
// pipelinesv1beta1.AnnotationDefaultArtifactRepository picks the default key.
const ArtifactRepositoriesConfigMap = "artifact-repositories"

// ArtifactLocation is where a resource's artifacts go (the contract's type).
type ArtifactLocation = contract.ArtifactLocation

// resolveArtifacts applies DESIGN §6: the resource's explicit ref, then its
// namespace's artifact-repositories default, then the Provider's
// artifactRepository, then the Provider's pipelineRootStorage. A malformed
// ConfigMap is a problem naming the key; an absent one falls through.
//
// namespace is the resource's, runNamespace is where its runs execute (the
// Provider's namespace, or the operator's workflowNamespace): the Secret
// names of the result resolve there. A location read from namespace may name
// Secrets only when runNamespace is that namespace (see secretScope).
func resolveArtifacts(ctx context.Context, c client.Reader, namespace, runNamespace string,
	explicit *pipelinesv1beta1.ArtifactRepositoryRef, p *pipelinesv1beta1.Provider) (*ArtifactLocation, error) {
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
		if err := secretScope(loc, namespace, runNamespace, p); err != nil {
			return nil, err
		}
		return loc, nil
	}
	loc, found, err := fromConfigMap(ctx, c, namespace, ArtifactRepositoriesConfigMap, "")
	if err != nil {
		return nil, err
	}
	if found {
		loc.Source = "namespace"
		if err := secretScope(loc, namespace, runNamespace, p); err != nil {
			return nil, err
		}
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

// secretScope enforces that Secrets resolve only in the namespace that owns
// the configuration. The provider reads the Secrets loc names in
// runNamespace; a location configured in the resource's namespace (its
// explicit ref or its namespace's default, Source "resource" or "namespace")
// may therefore name Secrets only when runNamespace is that namespace.
// Otherwise a tenant allowed to use another namespace's Provider could pick
// the endpoint and have the provider send that namespace's (or the shared
// workflowNamespace's) credentials to it. Locations from the Provider itself
// (artifactRepository, pipelineRootStorage) are the Provider owners' and the
// platform's configuration and keep their Secrets, also in workflowNamespace
// mode.
func secretScope(loc *ArtifactLocation, namespace, runNamespace string, p *pipelinesv1beta1.Provider) error {
	if loc == nil || len(loc.Secrets) == 0 || namespace == runNamespace {
		return nil
	}
	if loc.Source != "resource" && loc.Source != "namespace" {
		return nil
	}
	where := fmt.Sprintf("ConfigMap %s", namespace)
	if loc.Ref != nil {
		where = fmt.Sprintf("ConfigMap %s/%s key %q", namespace, loc.Ref.Name, loc.Ref.Key)
	}
	if loc.Source == "resource" {
		where = "spec.artifactRepositoryRef: " + where
	}
	var names []string
	for _, s := range loc.Secrets {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf(
		"%s names Secrets %v, but runs of provider %s/%s execute in namespace %s, where those names would resolve "+
			"to that namespace's Secrets, not %s's: Secrets resolve only in the namespace that owns the configuration. "+
			"Use a repository without credentials here, or ask the owners of provider %s/%s to configure it in the "+
			"Provider's spec.artifactRepository",
		where, names, p.Namespace, p.Name, runNamespace, namespace, p.Namespace, p.Name)}
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
		key = cm.Annotations[pipelinesv1beta1.AnnotationDefaultArtifactRepository]
	}
	if key == "" {
		keys := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) != 1 {
			return nil, true, &problem{pipelinesv1beta1.ReasonArtifactRepoInvalid, fmt.Sprintf(
				"%s has no annotation %s naming the default among its keys %v", where, pipelinesv1beta1.AnnotationDefaultArtifactRepository, keys)}
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
