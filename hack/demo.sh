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

step "apply the samples (all but the Provider, which the chart installed) into team-a"
for f in config/samples/*.yaml; do
  [ "$(basename "$f")" = provider.yaml ] || kubectl apply -n team-a -f "$f"
done

step "team-b uses team-a's provider: refused until team-a allows it"
kubectl create namespace team-b --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -n team-b -f - <<'YAML'
apiVersion: pipelines.kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: shared-experiment
spec:
  provider: team-a/kfp
  description: team-b using team-a's provider
YAML
kubectl wait -n team-b --for=jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'=NamespaceNotAllowed \
  experiment/shared-experiment --timeout=60s
kubectl get mlexp -n team-b shared-experiment -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}{"\n"}'
kubectl patch mlprv kfp -n team-a --type=merge -p '{"spec":{"allowedNamespaces":["team-b"]}}'
kubectl wait -n team-b --for=jsonpath='{.status.conditions[?(@.type=="Synchronized")].reason}'=Creating \
  experiment/shared-experiment --timeout=60s

sleep 2
step "every resource with its conditions"
for ns in team-a team-b; do
  kubectl get kfp -n "$ns" -o custom-columns='KIND:.kind,NAMESPACE:.metadata.namespace,NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,REASON:.status.conditions[?(@.type=="Ready")].reason,SYNCHRONIZED:.status.conditions[?(@.type=="Synchronized")].reason,MESSAGE:.status.conditions[?(@.type=="Ready")].message'
done

step "every PipelineRun the operator created: namespace, service account, labels"
kubectl get pipelineruns -A -l app.kubernetes.io/managed-by=kfp-tekton-operator \
  -o custom-columns='NAMESPACE:.metadata.namespace,NAME:.metadata.name,SERVICEACCOUNT:.spec.taskRunTemplate.serviceAccountName,KIND:.metadata.labels.pipelines\.kubeflow\.org/owner\.kind,OWNER:.metadata.annotations.pipelines\.kubeflow\.org/owner,OPERATION:.metadata.labels.pipelines\.kubeflow\.org/operation,TASK:.spec.pipelineSpec.tasks[0].taskRef.name'
echo
echo "NOTE: the local control plane has no Tekton controller (and no kubelet): these PipelineRuns stay"
echo "pending, so the resources stay Creating and the RunConfiguration waits for its Pipeline's version."
echo "On a cluster with Tekton installed they run (README: Install on a cluster)."

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
