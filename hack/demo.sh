#!/usr/bin/env bash
# The main job on the local default: brings up the local control plane with
# every CRD, applies the samples into namespace team-a and shows them.
# Against a real cluster, set KUBECONFIG to it and pass --no-local.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ "${1:-}" != "--no-local" ]; then
  ./hack/cluster.sh up
  export KUBECONFIG=$root/bin/kubeconfig
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "namespace team-a"
kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f -

step "apply config/samples"
kubectl apply -n team-a -f config/samples/

step "kubectl get kfp -n team-a"
kubectl get kfp -n team-a

step "an invalid Pipeline is refused with the field named"
if kubectl apply -n team-a -f - <<'YAML'; then echo "unexpectedly accepted" >&2; exit 1; fi
apiVersion: pipelines.kubeflow.org/v1beta1
kind: Pipeline
metadata:
  name: broken
spec:
  provider: team-a/kfp/extra
  image: example.com/pipeline:1
  framework:
    name: tfx
YAML

step "prgen: trigger the operator's release at main (ci/releases.yaml)"
kubectl create namespace kfp-tekton-ci --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -n kfp-tekton-ci -f ci/tasks/
go run ./cmd/prgen -f ci/releases.yaml --select app=operator,version=main | kubectl create -f -
kubectl get pipelineruns -n kfp-tekton-ci -l app=operator,version=main

step "done"
echo "The control plane keeps running: export KUBECONFIG=$root/bin/kubeconfig; stop it with make cluster-down"
