#!/usr/bin/env bash
# Gives namespace NS a PersistentVolumeClaim CLAIM bound to a volume of the
# local cluster: a directory under the cluster's state (bin/cluster/volumes),
# so `make cluster-down` removes it with everything else: the one named,
# retained volume a Tekton provider's artifactsClaim needs (the provisioner
# of the "local" StorageClass makes per-claim volumes that go with their
# claims). Runs inside the cluster's namespace.
# Usage: hack/local-volume.sh NS CLAIM [SIZE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ns=$1 claim=$2 size=${3:-1Gi}
dir=$root/bin/cluster/volumes/$ns-$claim
mkdir -p "$dir"
# Pipeline steps run as non-root users of their images' choosing.
chmod 0777 "$dir"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: local-$ns-$claim
  labels: {app.kubernetes.io/managed-by: kfp-local-cluster}
spec:
  capacity: {storage: $size}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: $dir, type: Directory}
  claimRef: {namespace: $ns, name: $claim}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $claim, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: local-$ns-$claim
  resources: {requests: {storage: $size}}
YAML
echo "$dir"
