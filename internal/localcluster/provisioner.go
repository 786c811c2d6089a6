package localcluster

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// The local cluster's one StorageClass, its default: claims of it get a
// directory of the cluster's state (so `make cluster-down` removes them).
// Tekton's volumeClaimTemplate workspaces (a pipeline compile hands its
// definition to the provider's pod in one) need a dynamic provisioner.
// Volumes are "local" volumes of root-owned 0755 directories: like a real
// CSI volume, a pod not running as root writes to one only through its
// fsGroup, which the kubelet applies to local volumes (it ignores it for
// hostPath ones).
const (
	StorageClass = "local"
	provisioner  = "kfp-tekton.local/volumes"
	// annotationProvisionedBy is the PV controller's record of who provisioned a volume.
	annotationProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// ProvisionVolumes serves the local StorageClass until ctx ends: a pending
// claim of it gets a volume bound to it, and a released volume is deleted
// with its directory. It polls: a claim waits at most a second.
func ProvisionVolumes(ctx context.Context, kubeconfig, dir, node string, logger *log.Logger) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for ctx.Err() == nil {
		if err := ensureStorageClass(ctx, client); err != nil {
			logger.Printf("storage class: %v", err)
		} else if err := provisionOnce(ctx, client, dir, node, logger); err != nil {
			logger.Printf("provisioning: %v", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func ensureStorageClass(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.StorageV1().StorageClasses().Get(ctx, StorageClass, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	mode := storagev1.VolumeBindingImmediate
	_, err = client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: StorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: &mode,
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func provisionOnce(ctx context.Context, client kubernetes.Interface, dir, node string, logger *log.Logger) error {
	claims, err := client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		if claim.Status.Phase != corev1.ClaimPending || claim.Spec.VolumeName != "" ||
			claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != StorageClass || claim.DeletionTimestamp != nil {
			continue
		}
		if err := provision(ctx, client, dir, node, claim); err != nil {
			return err
		}
		logger.Printf("provisioned a volume for %s/%s", claim.Namespace, claim.Name)
	}
	volumes, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range volumes.Items {
		pv := &volumes.Items[i]
		if pv.Annotations[annotationProvisionedBy] != provisioner || pv.Status.Phase != corev1.VolumeReleased {
			continue
		}
		if err := release(ctx, client, dir, pv); err != nil {
			return err
		}
	}
	return nil
}

// volumeName is the volume of claim: one per claim UID, so a retry after a
// crash finds the volume it made.
func volumeName(claim *corev1.PersistentVolumeClaim) string { return "local-" + string(claim.UID) }

func provision(ctx context.Context, client kubernetes.Interface, dir, node string, claim *corev1.PersistentVolumeClaim) error {
	name := volumeName(claim)
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	_, err := client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotationProvisionedBy: provisioner},
			Labels: map[string]string{"app.kubernetes.io/managed-by": "kfp-local-cluster"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              StorageClass,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
		},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating volume %s for %s/%s: %w", name, claim.Namespace, claim.Name, err)
	}
	return nil
}

func release(ctx context.Context, client kubernetes.Interface, dir string, pv *corev1.PersistentVolume) error {
	if lv := pv.Spec.Local; lv != nil && strings.HasPrefix(lv.Path, dir+string(filepath.Separator)) {
		if err := os.RemoveAll(lv.Path); err != nil {
			return err
		}
	}
	err := client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
