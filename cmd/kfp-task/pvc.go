package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// kfp-kubernetes CreatePVC and DeletePVC (internal/kfpir, pvc.go): a
// compiled pipeline's PVC tasks run
//
//	kfp-task pvc create --owner NS --run RUN --result PATH --access-modes JSON --size Q
//	    [--pvc-name NAME | --pvc-name-suffix SUFFIX] [--storage-class-name SC] [--annotations JSON] [--volume-name PV]
//	kfp-task pvc delete --owner NS --pvc-name NAME
//
// with an account that may manage PVCs in the pod's own namespace, the
// only one they act in. create makes the claim, labelled as made by NS's
// pipelines (contract.LabelPVCOwner) in RUN, and writes its name to PATH; delete
// deletes a claim so labelled for NS and refuses any other.

const (
	// maxPVCSize guards against a typo's size; a ResourceQuota on
	// requests.storage is what bounds a namespace's claims.
	maxPVCSize = "1Pi"
	pvcTimeout = 2 * time.Minute
)

var pvcAccessModes = map[string]bool{"ReadWriteOnce": true, "ReadOnlyMany": true, "ReadWriteMany": true, "ReadWriteOncePod": true}

type pvcFlags struct {
	owner, run, result, accessModes, size, name, suffix, storageClass, volumeName, annotations string
}

func pvcCmd(args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "delete") {
		return errors.New("pvc: want create or delete")
	}
	verb := args[0]
	var f pvcFlags
	fs := flag.NewFlagSet("pvc "+verb, flag.ContinueOnError)
	fs.StringVar(&f.owner, "owner", "", "the namespace whose pipeline manages the claim")
	fs.StringVar(&f.name, "pvc-name", "", "the claim's name")
	if verb == "create" {
		fs.StringVar(&f.run, "run", "", "the PipelineRun's name")
		fs.StringVar(&f.result, "result", "", "file receiving the claim's name")
		fs.StringVar(&f.accessModes, "access-modes", "", "JSON list of access modes")
		fs.StringVar(&f.size, "size", "", "storage requested")
		fs.StringVar(&f.suffix, "pvc-name-suffix", "", "the name is the run's name plus this suffix")
		fs.StringVar(&f.storageClass, "storage-class-name", "", "StorageClass (empty: the cluster's default)")
		fs.StringVar(&f.volumeName, "volume-name", "", "a PersistentVolume to bind (refused)")
		fs.StringVar(&f.annotations, "annotations", "", "JSON object of the claim's annotations")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("pvc %s: unexpected argument %q", verb, fs.Arg(0))
	}
	api, err := inClusterClaims()
	if err != nil {
		return fmt.Errorf("pvc %s: %w", verb, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pvcTimeout)
	defer cancel()
	if verb == "delete" {
		return deletePVC(ctx, api, f.owner, f.name, os.Stdout)
	}
	claim, err := claimFor(f)
	if err != nil {
		return fmt.Errorf("pvc create: %w", err)
	}
	if err := createPVC(ctx, api, claim, os.Stdout); err != nil {
		return err
	}
	return os.WriteFile(f.result, []byte(claim.Name), 0o644)
}

// claimFor checks the flags and builds the claim.
func claimFor(f pvcFlags) (*corev1.PersistentVolumeClaim, error) {
	if f.owner == "" || f.run == "" || f.result == "" {
		return nil, errors.New("--owner, --run and --result are required")
	}
	name := f.name
	switch {
	case f.name != "" && f.suffix != "":
		return nil, errors.New("give pvc_name or pvc_name_suffix, not both")
	case f.suffix != "":
		name = f.run + f.suffix
	case f.name == "":
		return nil, errors.New("give pvc_name or pvc_name_suffix")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("claim name %q: %s", name, errs[0])
	}
	if f.volumeName != "" {
		return nil, fmt.Errorf("volume_name %q: binding a claim to a PersistentVolume by name is refused (it could take a volume provisioned for someone else)", f.volumeName)
	}
	var modes []string
	if err := json.Unmarshal([]byte(f.accessModes), &modes); err != nil || len(modes) == 0 {
		return nil, fmt.Errorf("access_modes %q: want a non-empty JSON list", f.accessModes)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelPVCOwner: f.owner, contract.LabelPVCRun: f.run}}}
	for _, m := range modes {
		if !pvcAccessModes[m] {
			return nil, fmt.Errorf("access mode %q: want ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod", m)
		}
		claim.Spec.AccessModes = append(claim.Spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
	}
	q, err := resource.ParseQuantity(f.size)
	if err != nil || q.Sign() <= 0 || q.Cmp(resource.MustParse(maxPVCSize)) > 0 {
		return nil, fmt.Errorf("size %q: want a positive quantity such as 5Gi, at most %s", f.size, maxPVCSize)
	}
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
	if f.storageClass != "" {
		sc := f.storageClass
		claim.Spec.StorageClassName = &sc
	}
	for _, v := range []string{f.owner, f.run} {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label value %q: %s", v, errs[0])
		}
	}
	if f.annotations != "" && f.annotations != "{}" {
		if err := json.Unmarshal([]byte(f.annotations), &claim.Annotations); err != nil {
			return nil, fmt.Errorf("annotations: want a JSON object of strings: %w", err)
		}
		for k := range claim.Annotations {
			if reservedAnnotation(k) {
				return nil, fmt.Errorf("annotation %q: the kubernetes.io and k8s.io prefixes are Kubernetes' (they steer provisioning)", k)
			}
		}
	}
	return claim, nil
}

func reservedAnnotation(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, domain := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == domain || strings.HasSuffix(prefix, "."+domain) {
			return true
		}
	}
	return false
}

// madeByOwner says whether the claim was made by a pipeline of owner.
func madeByOwner(c *corev1.PersistentVolumeClaim, owner string) bool {
	return owner != "" && c.Labels[contract.LabelManagedBy] == contract.ManagedByTektonProvider && c.Labels[contract.LabelPVCOwner] == owner
}

// createPVC makes the claim. One that exists is taken if this
// namespace's pipelines made it (a retried task, or a later run reusing a
// fixed name, as KFP reuses an existing claim); any other is refused.
func createPVC(ctx context.Context, api claimAPI, claim *corev1.PersistentVolumeClaim, log io.Writer) error {
	err := api.create(ctx, claim)
	if err == nil {
		fmt.Fprintf(log, "created PersistentVolumeClaim %s\n", claim.Name)
		return nil
	}
	if !errors.Is(err, errAlreadyExists) {
		return fmt.Errorf("pvc create %s: %w", claim.Name, err)
	}
	existing, err := api.get(ctx, claim.Name)
	if err != nil {
		return fmt.Errorf("pvc create %s: exists, and reading it failed: %w", claim.Name, err)
	}
	owner := claim.Labels[contract.LabelPVCOwner]
	if !madeByOwner(existing, owner) {
		return fmt.Errorf("pvc create %s: a PersistentVolumeClaim of that name exists and was not made by a pipeline of namespace %s; choose another name", claim.Name, owner)
	}
	fmt.Fprintf(log, "PersistentVolumeClaim %s exists (made by run %s), using it\n", claim.Name, existing.Labels[contract.LabelPVCRun])
	return nil
}

// deletePVC deletes the claim if this namespace's pipelines made it.
func deletePVC(ctx context.Context, api claimAPI, owner, name string, log io.Writer) error {
	if owner == "" {
		return errors.New("pvc delete: --owner is required")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("pvc delete: claim name %q: %s", name, errs[0])
	}
	existing, err := api.get(ctx, name)
	if errors.Is(err, errNotFound) {
		fmt.Fprintf(log, "PersistentVolumeClaim %s does not exist: nothing to delete\n", name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("pvc delete %s: %w", name, err)
	}
	if !madeByOwner(existing, owner) {
		return fmt.Errorf("pvc delete %s: refused, the claim was not made by a pipeline of namespace %s (label %s)", name, owner, contract.LabelPVCOwner)
	}
	if err := api.delete(ctx, name, string(existing.UID)); err != nil && !errors.Is(err, errNotFound) {
		return fmt.Errorf("pvc delete %s: %w", name, err)
	}
	fmt.Fprintf(log, "deleted PersistentVolumeClaim %s\n", name)
	return nil
}
