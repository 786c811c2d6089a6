package kfpir

import (
	"fmt"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// genericEphemeralVolume (kfp-kubernetes add_ephemeral_volume): a volume
// whose claim Kubernetes makes with the pod, from the template, in the
// pod's namespace, and deletes with it.
type ephemeralVolume struct {
	VolumeName          string   `json:"volumeName"`
	MountPath           string   `json:"mountPath"`
	AccessModes         []string `json:"accessModes"`
	Size                string   `json:"size"`
	DefaultStorageClass bool     `json:"defaultStorageClass"`
	StorageClassName    string   `json:"storageClassName"`
	Metadata            *struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

var claimAccessModes = map[string]bool{"ReadWriteOnce": true, "ReadOnlyMany": true, "ReadWriteMany": true, "ReadWriteOncePod": true}

// platformEphemeral mounts the generic ephemeral volumes.
func platformEphemeral(task string, cfg *kubernetesConfig, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
	for i, v := range cfg.GenericEphemeralVolume {
		q, err := resource.ParseQuantity(v.Size)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("task %q: kfp-kubernetes ephemeral volume %q size %q: want a positive quantity", task, v.VolumeName, v.Size)
		}
		spec := corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}}
		if len(v.AccessModes) == 0 {
			return fmt.Errorf("task %q: kfp-kubernetes ephemeral volume %q has no access mode", task, v.VolumeName)
		}
		for _, m := range v.AccessModes {
			if !claimAccessModes[m] {
				return fmt.Errorf("task %q: kfp-kubernetes ephemeral volume %q access mode %q: want ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod", task, v.VolumeName, m)
			}
			spec.AccessModes = append(spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
		}
		if !v.DefaultStorageClass {
			sc := v.StorageClassName
			spec.StorageClassName = &sc
		}
		tpl := &corev1.PersistentVolumeClaimTemplate{Spec: spec}
		if m := v.Metadata; m != nil {
			tpl.ObjectMeta = metav1.ObjectMeta{Labels: m.Labels, Annotations: m.Annotations}
		}
		src := corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: tpl}}
		if err := mountVolume(task, "kfp-ephemeral-", i, src, v.MountPath, ts, main); err != nil {
			return err
		}
	}
	return nil
}
