#!/usr/bin/env bash
# The main job on the local default: the local control plane (with an image
# registry on 127.0.0.1), the operator running against it, a provider
# installed into team-a with the provider chart, the samples applied, and a
# release triggered with prgen. Everything keeps running afterwards; stop it
# with `make cluster-down`.
# Against a real cluster with Tekton installed, see README ("Install").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=$root/bin

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "local control plane"
./hack/cluster.sh up
export KUBECONFIG=$bin/kubeconfig
registry=$(cat "$bin/registry")

step "operator (log: bin/operator.log)"
go build -o "$bin/operator" ./cmd/operator
if [ -f "$bin/operator.pid" ] && kill -0 "$(cat "$bin/operator.pid")" 2>/dev/null; then
  kill "$(cat "$bin/operator.pid")"; sleep 1
fi
KFP_HELPER_IMAGE=$registry/demo/operator:0.1.0 nohup "$bin/operator" --kubeconfig "$KUBECONFIG" \
  --metrics-bind-address 0 --health-probe-bind-address 127.0.0.1:0 --retry-after 5s >"$bin/operator.log" 2>&1 &
echo $! >"$bin/operator.pid"
echo "operator pid $(cat "$bin/operator.pid")"

step "install a provider into team-a (provider chart)"
kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f -
"$bin/helm" template kfp config/helm/kfp-tekton-provider --namespace team-a \
  --set provider.image="$registry/demo/provider:0.1.0" \
  --set 'provider.frameworks[0].name=tfx' --set "provider.frameworks[0].image=$registry/demo/compiler-tfx:0.1.0" |
  kubectl apply --server-side --field-manager=demo -f -
kubectl wait --for=condition=Ready provider/kfp -n team-a --timeout=120s

step "kubectl get mlprv,tasks -n team-a"
kubectl get mlprv -n team-a -o wide
kubectl get tasks -n team-a

step "apply the samples (all but the Provider) into team-a"
for f in config/samples/*.yaml; do
  [ "$(basename "$f")" = provider.yaml ] || kubectl apply -n team-a -f "$f"
done
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
echo "Everything keeps running: export KUBECONFIG=$KUBECONFIG; stop it with make cluster-down"
