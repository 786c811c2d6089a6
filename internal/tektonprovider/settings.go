package tektonprovider

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"
)

// Provider spec.parameters the Tekton provider reads. Other keys are left
// to other readers.
const (
	// ParamPipelineServiceAccount names the service account ML pipeline
	// steps run as (default DefaultPipelineServiceAccount). It must not be
	// the Provider's own account, which can create PipelineRuns. Defined in
	// meta, where the operator reads it too.
	ParamPipelineServiceAccount = meta.ParamPipelineServiceAccount
	// ParamArtifactsClaim names a PersistentVolumeClaim in the provider
	// namespace that holds the pipeline roots of every namespace the
	// Provider admits, one directory each (NamespaceDirectory): a run
	// mounts only its namespace's.
	ParamArtifactsClaim = "artifactsClaim"
	// ParamArtifactsStorage is the size of the volume claimed for each run
	// when no artifactsClaim is named (default DefaultArtifactsStorage).
	ParamArtifactsStorage = "artifactsStorage"
	// ParamArtifactsStorageClass is the StorageClass of that per-run
	// volume (default: the cluster's default class).
	ParamArtifactsStorageClass = "artifactsStorageClass"
	// ParamPVCServiceAccount names the account the tasks of kfp-kubernetes
	// CreatePVC and DeletePVC run as (contract.AnnotationPVCTasks): one that
	// may get, create and delete PersistentVolumeClaims in the namespace
	// the runs execute in, and nothing else. Those tasks run only the
	// provider's image. Without it a run of a pipeline with such tasks is
	// refused.
	ParamPVCServiceAccount = "pvcServiceAccount"
)

const (
	// DefaultPipelineServiceAccount is the namespace's default account,
	// which holds no rights unless someone granted it some.
	DefaultPipelineServiceAccount = meta.DefaultPipelineServiceAccount
	// DefaultArtifactsStorage is the per-run volume's size.
	DefaultArtifactsStorage = "1Gi"
)

// Settings are the Tekton provider's parameters, checked.
type Settings struct {
	PipelineServiceAccount string
	ArtifactsClaim         string
	ArtifactsStorage       resource.Quantity
	ArtifactsStorageClass  string
	PVCServiceAccount      string
}

// SettingsFrom reads and checks the provider's parameters.
func SettingsFrom(cfg contract.ProviderConfig) (Settings, error) {
	s := Settings{PipelineServiceAccount: DefaultPipelineServiceAccount}
	storage := DefaultArtifactsStorage
	for key, dst := range map[string]*string{
		ParamPipelineServiceAccount: &s.PipelineServiceAccount,
		ParamArtifactsClaim:         &s.ArtifactsClaim,
		ParamArtifactsStorage:       &storage,
		ParamArtifactsStorageClass:  &s.ArtifactsStorageClass,
		ParamPVCServiceAccount:      &s.PVCServiceAccount,
	} {
		raw, ok := cfg.Spec.Parameters[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw.Raw, dst); err != nil {
			return Settings{}, fmt.Errorf("provider parameter %s must be a string, not %s", key, raw.Raw)
		}
	}
	for key, name := range map[string]string{
		ParamPipelineServiceAccount: s.PipelineServiceAccount,
		ParamArtifactsClaim:         s.ArtifactsClaim,
		ParamArtifactsStorageClass:  s.ArtifactsStorageClass,
		ParamPVCServiceAccount:      s.PVCServiceAccount,
	} {
		if name == "" && key != ParamPipelineServiceAccount {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Settings{}, fmt.Errorf("provider parameter %s %q is not a valid object name: %s", key, name, errs[0])
		}
	}
	if s.PipelineServiceAccount == cfg.Spec.ServiceAccount {
		return Settings{}, fmt.Errorf("provider parameter %s is the Provider's own service account %q, which can create PipelineRuns: "+
			"name an account for pipeline steps that holds no such rights", ParamPipelineServiceAccount, cfg.Spec.ServiceAccount)
	}
	switch s.PVCServiceAccount {
	case "":
	case cfg.Spec.ServiceAccount:
		return Settings{}, fmt.Errorf("provider parameter %s is the Provider's own service account %q, which can create PipelineRuns: "+
			"name an account that may only manage PersistentVolumeClaims", ParamPVCServiceAccount, cfg.Spec.ServiceAccount)
	case s.PipelineServiceAccount:
		return Settings{}, fmt.Errorf("provider parameter %s is %s %q, the account every pipeline step runs as: "+
			"name another, so that only the PVC tasks may manage claims", ParamPVCServiceAccount, ParamPipelineServiceAccount, s.PVCServiceAccount)
	}
	q, err := resource.ParseQuantity(storage)
	if err != nil || q.Sign() <= 0 {
		return Settings{}, fmt.Errorf("provider parameter %s %q is not a positive quantity such as 1Gi", ParamArtifactsStorage, storage)
	}
	s.ArtifactsStorage = q
	return s, nil
}
