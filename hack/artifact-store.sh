#!/usr/bin/env bash
# The local cluster's artifact store (DESIGN §14): SeaweedFS (Apache-2.0,
# built from the Go module proxy into bin/weed) serving S3 inside the cluster
# only, on port 8333 of the Service kfp-artifact-store/seaweedfs (by cluster
# IP: the local cluster runs no DNS), with the bucket kfp-artifacts.
# Its keys are made here at random, once, into the Secret
# kfp-artifact-store/s3-keys (accessKey, secretKey): a Provider's namespace
# gets a copy to name in its artifactRepository.s3. Runs inside the cluster's
# namespace (hack/cluster.sh up calls it); a second run changes nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
registry=10.200.0.1:5000
ns=kfp-artifact-store
bucket=kfp-artifacts
started=$SECONDS

image=$("$bin/localcluster" image --base "$registry/base/static:latest" --file /weed="$bin/weed" --push "$registry/seaweedfs:dev")

kubectl apply --server-side -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
  labels: {pod-security.kubernetes.io/enforce: restricted}
YAML
if ! kubectl get secret -n "$ns" s3-keys >/dev/null 2>&1; then
  key() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
  access=$(key 10) secret=$(key 20)
  kubectl create secret generic -n "$ns" s3-keys --from-literal=accessKey="$access" --from-literal=secretKey="$secret" >/dev/null
fi
access=$(kubectl get secret -n "$ns" s3-keys -o jsonpath='{.data.accessKey}' | base64 -d)
secret=$(kubectl get secret -n "$ns" s3-keys -o jsonpath='{.data.secretKey}' | base64 -d)
# SeaweedFS's S3 identities: one, allowed everything in the store.
config=$(printf '{"identities":[{"name":"kfp","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}' "$access" "$secret")
kubectl create secret generic -n "$ns" s3-config --from-literal=s3.json="$config" --dry-run=client -o yaml | kubectl apply --server-side -f - >/dev/null

kubectl apply --server-side -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: seaweedfs, namespace: $ns}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: seaweedfs}}
  template:
    metadata: {labels: {app: seaweedfs}}
    spec:
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: weed
          image: $image
          args: [server, -dir=/data, -ip.bind=0.0.0.0, -master.volumeSizeLimitMB=64, -volume.max=16,
                 -s3, -s3.port=8333, -s3.config=/etc/seaweedfs/s3.json]
          ports: [{containerPort: 8333, name: s3}]
          readinessProbe: {tcpSocket: {port: 8333}, periodSeconds: 2}
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          volumeMounts:
            - {name: data, mountPath: /data}
            - {name: config, mountPath: /etc/seaweedfs, readOnly: true}
      volumes:
        - {name: data, emptyDir: {}}
        - {name: config, secret: {secretName: s3-config}}
---
apiVersion: v1
kind: Service
metadata: {name: seaweedfs, namespace: $ns}
spec:
  selector: {app: seaweedfs}
  ports: [{name: s3, port: 8333, targetPort: s3}]
YAML
kubectl rollout status -n "$ns" deploy/seaweedfs --timeout=180s >/dev/null
# The bucket, through SeaweedFS's own shell (the image has no other).
for _ in $(seq 1 60); do
  out=$(echo "s3.bucket.create -name $bucket" | kubectl exec -i -n "$ns" deploy/seaweedfs -- /weed shell -master=localhost:9333 -filer=localhost:8888 2>&1 || true)
  echo "s3.bucket.list" | kubectl exec -i -n "$ns" deploy/seaweedfs -- /weed shell -master=localhost:9333 -filer=localhost:8888 2>/dev/null | grep -qw "$bucket" && break
  sleep 2
done
echo "s3.bucket.list" | kubectl exec -i -n "$ns" deploy/seaweedfs -- /weed shell -master=localhost:9333 -filer=localhost:8888 2>/dev/null | grep -qw "$bucket" ||
  { echo "the artifact store did not create bucket $bucket: $out" >&2; exit 1; }
echo "artifact store (SeaweedFS S3, bucket $bucket) ready in $((SECONDS - started)) s"
