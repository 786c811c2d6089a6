package provider

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// A provider service's pod takes kfp-operator's spec.podTemplateEnv,
// podTemplateVolumes and podTemplateVolumeMounts. The Provider's author is
// a tenant, and the operator creates the pod with its own rights, in the
// workflow namespace: whatever the pod references, the kubelet mounts
// without asking whether the author could read it. So the operator checks
// what the API server's rules on those fields check (for a CRD applied
// before them, or edited), and, with a shared workflowNamespace, what
// those rules cannot know: which namespace the pod lands in.

// errPodTemplateRefused: the Provider's pod settings ask for what the
// operator does not give a provider service.
var errPodTemplateRefused = errors.New("provider service pod settings refused")

// allowedVolumeTypes are the volume types Pod Security `restricted`
// admits; every other (hostPath, nfs, gitRepo and the rest of the in-tree
// types, image) is refused, whatever a future API adds.
var allowedVolumeTypes = []string{"emptyDir", "configMap", "secret", "projected", "downwardAPI", "persistentVolumeClaim", "ephemeral", "csi"}

// sharedVolumeTypes are those a Provider from another namespace may use in
// a shared workflow namespace: none reads an object of the namespace (a
// projected volume is checked source by source).
var sharedVolumeTypes = []string{"emptyDir", "downwardAPI", "projected"}

// sharedProjections are the projected sources such a Provider may use: the
// pod's own identity and metadata, and cluster-wide public trust bundles
// (kfp-operator's use: a service account token for KFP's multi-user API).
var sharedProjections = []string{"serviceAccountToken", "downwardAPI", "clusterTrustBundle", "podCertificate"}

// volumeType is the JSON name of v's source (hostPath, emptyDir, ...):
// "" when it has none, the names joined by "+" when it has several.
func volumeType(v corev1.Volume) string {
	return setField(reflect.ValueOf(v.VolumeSource))
}

// setField is the JSON name of the member set in a one-of struct value s
// (VolumeSource, VolumeProjection): its non-nil pointer fields, joined by
// "+" if there are several (which no allowed type is).
func setField(s reflect.Value) string {
	var set []string
	for i := range s.NumField() {
		if f := s.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(s.Type().Field(i).Tag.Get("json"), ",")
			set = append(set, name)
		}
	}
	return strings.Join(set, "+")
}

// podTemplateProblem says why the operator will not run p's provider
// service with its pod settings, or nil. shared: p is outside the shared
// workflow namespace its service runs in, where the namespace's Secrets,
// ConfigMaps and volumes are other tenants'.
func podTemplateProblem(p *pipelinesv1beta1.Provider, shared bool) error {
	const sharedWhy = "the Provider is outside the shared workflow namespace its provider service runs in, where that would reach other tenants'"
	volumes := map[string]bool{}
	for i, v := range p.Spec.PodTemplateVolumes {
		field := fmt.Sprintf("spec.podTemplateVolumes[%d] (%s)", i, v.Name)
		typ := volumeType(v)
		switch {
		case v.Name == eventsTokenVolume:
			return fmt.Errorf("%w: %s: %s is the name of the operator's own volume in the provider service's pod", errPodTemplateRefused, field, eventsTokenVolume)
		case slices.Contains(strings.Split(typ, "+"), "hostPath"):
			return fmt.Errorf("%w: %s: hostPath would give the provider service its node's filesystem", errPodTemplateRefused, field)
		case !slices.Contains(allowedVolumeTypes, typ):
			return fmt.Errorf("%w: %s: %s is none of the volume types Pod Security restricted allows: %s",
				errPodTemplateRefused, field, typ, strings.Join(allowedVolumeTypes, ", "))
		case shared && !slices.Contains(sharedVolumeTypes, typ):
			return fmt.Errorf("%w: %s: %s: %s %s; use %s (projected: %s sources)",
				errPodTemplateRefused, field, typ, sharedWhy, referenced(typ), strings.Join(sharedVolumeTypes, ", "), strings.Join(sharedProjections, ", "))
		case shared && typ == "projected":
			for j, source := range v.Projected.Sources {
				if kind := setField(reflect.ValueOf(source)); !slices.Contains(sharedProjections, kind) {
					return fmt.Errorf("%w: %s: projected source %d (%s): %s %s; use %s sources",
						errPodTemplateRefused, field, j, kind, sharedWhy, referenced(kind), strings.Join(sharedProjections, ", "))
				}
			}
		}
		volumes[v.Name] = true
	}
	for i, m := range p.Spec.PodTemplateVolumeMounts {
		if !volumes[m.Name] {
			return fmt.Errorf("%w: spec.podTemplateVolumeMounts[%d] (%s) mounts %q, which is not one of spec.podTemplateVolumes",
				errPodTemplateRefused, i, m.MountPath, m.Name)
		}
	}
	for i, e := range p.Spec.PodTemplateEnv {
		field := fmt.Sprintf("spec.podTemplateEnv[%d] (%s)", i, e.Name)
		if operatorEnvName(e.Name) {
			return fmt.Errorf("%w: %s: the operator sets it on the provider service and its value wins (PROVIDERNAME, PIPELINEROOTSTORAGE, PARAMETERS_*, OPERATORWEBHOOK, SERVER_PORT, METRICS_PORT, POD_NAMESPACE)",
				errPodTemplateRefused, field)
		}
		if shared && e.ValueFrom != nil {
			switch {
			case e.ValueFrom.SecretKeyRef != nil:
				return fmt.Errorf("%w: %s: valueFrom.secretKeyRef: %s %s", errPodTemplateRefused, field, sharedWhy, referenced("secret"))
			case e.ValueFrom.ConfigMapKeyRef != nil:
				return fmt.Errorf("%w: %s: valueFrom.configMapKeyRef: %s %s", errPodTemplateRefused, field, sharedWhy, referenced("configMap"))
			}
		}
	}
	return nil
}

// referenced is what a volume or env source of kind reads in the namespace.
func referenced(kind string) string {
	switch kind {
	case "secret":
		return "Secrets"
	case "configMap":
		return "ConfigMaps"
	case "persistentVolumeClaim":
		return "volumes (PersistentVolumeClaims)"
	case "ephemeral":
		return "volumes (an ephemeral claim may clone a PersistentVolumeClaim or snapshot)"
	case "csi":
		return "Secrets and objects (a CSI volume's nodePublishSecretRef and driver attributes)"
	}
	return "objects"
}
