#!/usr/bin/env bash
# The main job on the local default, a real single-node cluster with real
# Tekton (DESIGN §9): the operator installed with its chart, a provider
# installed into team-a with the provider chart, the samples applied and
# every operation executed by Tekton on the node, cross-namespace use refused
# then allowed, an invalid Pipeline refused, and prgen's release runs
# validated by Tekton's webhook. Safe to run again with the cluster up.
# Everything keeps running afterwards; `make cluster-down` stops it.
#
# The backend is the project's own Tekton provider: the demo ML pipeline
# (cmd/kfp-demo) is compiled by the static compiler, uploaded as a Tekton
# Pipeline and run on the node, once by a Run and every minute by a
# RunConfiguration's schedule.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=$root/bin

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [ -z "${KFP_DEMO_INSIDE:-}" ]; then
  step "local real cluster (node, containerd, Tekton v1.15.1)"
  ./hack/cluster.sh up
  go mod download # the cluster's namespace has no route to the module proxy
  step "operator image built and installed with its Helm chart (2 replicas, leader election)"
  ./hack/cluster.sh exec ./hack/install-operator.sh
  exec ./hack/cluster.sh exec env KFP_DEMO_INSIDE=1 "$0" "$@"
fi

# From here on: inside the cluster's network namespace.
# shellcheck disable=SC1091
. "$bin/images.env"
kubectl get pods -n kfp-tekton-operator -o wide

step "install the Tekton provider into team-a (provider chart; Pod Security 'restricted' enforced there)"
kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl label namespace team-a pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
# Artifacts go to the cluster's S3 store (hack/artifact-store.sh), reached by
# its Service's cluster IP (no cluster DNS here); team-a gets a copy of its
# keys. The volume holds KFP's cache.
store_ip=$(kubectl get service seaweedfs -n kfp-artifact-store -o jsonpath='{.spec.clusterIP}')
key() { kubectl get secret s3-keys -n kfp-artifact-store -o jsonpath="{.data.$1}" | base64 -d; }
kubectl create secret generic s3-keys -n team-a --from-literal=accessKey="$(key accessKey)" --from-literal=secretKey="$(key secretKey)" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
repository='{"s3":{"bucket":"kfp-artifacts","keyPrefix":"demo","endpoint":"'$store_ip':8333","insecure":true,"accessKeySecret":{"name":"s3-keys","key":"accessKey"},"secretKeySecret":{"name":"s3-keys","key":"secretKey"}}}'
echo "artifact store: s3://kfp-artifacts/demo at $store_ip:8333; cache volume: $(./hack/local-volume.sh team-a kfp-artifacts)"
# A previous demo's team-b Experiment goes first, while team-a's provider still
# admits team-b (its deletion needs that; the install below resets the list).
kubectl delete experiment shared-experiment -n team-b --ignore-not-found --wait=true >/dev/null 2>&1 || true
helm upgrade --install kfp config/helm/kfp-tekton-provider --namespace team-a \
  -f config/provider/values.yaml \
  --set provider.image="$TEKTON_PROVIDER_IMAGE" \
  --set 'provider.frameworks[0].name=static' --set "provider.frameworks[0].image=$STATIC_COMPILER_IMAGE" \
  --set-json "provider.artifactRepository=$repository" >/dev/null
kubectl wait --for=condition=Ready provider/kfp -n team-a --timeout=120s
kubectl get mlprv -n team-a -o wide
kubectl get tasks -n team-a

step "apply the samples (all but the Providers: the chart installed kfp; provider-service.yaml is kfp-operator's reference form, for a Kubeflow Pipelines this cluster has not) into team-a"
# A second `make demo` starts the Run afresh (a Run's spec is immutable).
kubectl delete run demo-run -n team-a --ignore-not-found --wait=true >/dev/null
applied=$SECONDS
for f in config/samples/*.yaml; do
  case "$(basename "$f")" in provider.yaml | provider-service.yaml) continue ;; esac
  sed "s#ghcr.io/kfp-tekton-operator/demo-pipeline:1.0#$DEMO_PIPELINE_DIGEST_REF#" "$f" | kubectl apply -n team-a -f -
done
echo "waiting for every resource to be synchronised: the pipeline compiled and uploaded as a Tekton Pipeline..."
kubectl wait -n team-a --for=condition=Ready --timeout=300s \
  pipeline/demo-ml pipeline/demo-consumer experiment/demo-experiment runschedule/demo-nightly runconfiguration/demo-training run/demo-run
kubectl get pipelines.tekton.dev -n team-a -L pipelines.kubeflow.org/pipeline,pipelines.kubeflow.org/pipeline-version

step "the Run executes the ML pipeline on the node (generate -> train -> evaluate)"
kubectl wait -n team-a --for=jsonpath='{.status.completionState}'=Succeeded run/demo-run --timeout=300s
echo "Run demo-run completed $((SECONDS - applied)) s after kubectl apply"
kubectl get mlr -n team-a demo-run
pr=$(kubectl get run demo-run -n team-a -o jsonpath='{.status.provider.id}')
step "tkn pipelinerun logs $pr -n team-a (the training and evaluation steps)"
tkn pipelinerun logs "$pr" -n team-a | grep -E '\[(train|evaluate) : main\]'
echo "artifacts in the S3 store (s3://kfp-artifacts/demo/team-a/$pr, team-a's prefix), listed by SeaweedFS's shell:"
echo "fs.tree /buckets/kfp-artifacts/demo/team-a/$pr" |
  kubectl exec -i -n kfp-artifact-store deploy/seaweedfs -- /weed shell -master=localhost:9333 -filer=localhost:8888 2>/dev/null | tee "$bin/demo-artifacts.txt"
grep -q model "$bin/demo-artifacts.txt" || { echo "the model is not in the store" >&2; exit 1; }

step "the RunConfiguration's one-minute schedule: a CronJob whose Job starts a PipelineRun"
kubectl get cronjobs -n team-a -L pipelines.kubeflow.org/runschedule
for _ in $(seq 1 150); do
  n=$(kubectl get pipelineruns -n team-a -l pipelines.kubeflow.org/runconfiguration=demo-training -o name | wc -l)
  [ "$n" -gt 0 ] && break
  sleep 1
done
[ "$n" -gt 0 ] || { echo "no scheduled run within 150 s" >&2; exit 1; }
tkn pipelinerun list -n team-a --label pipelines.kubeflow.org/runconfiguration=demo-training --limit 3

step "a dependency: demo-report runs for each succeeded demo-training run, taking its model as a parameter"
for _ in $(seq 1 180); do
  latest=$(kubectl get runconfiguration demo-training -n team-a -o jsonpath='{.status.latestRuns.succeeded.providerId}')
  [ -n "$latest" ] && break
  sleep 1
done
[ -n "$latest" ] || { echo "demo-training recorded no succeeded run within 180 s" >&2; exit 1; }
kubectl get runconfiguration demo-training -n team-a -o jsonpath='latestRuns.succeeded: {.status.latestRuns.succeeded}{"\n"}'
for _ in $(seq 1 180); do
  report=$(kubectl get runs -n team-a -l pipelines.kubeflow.org/trigger=runConfiguration \
    -o jsonpath='{range .items[?(@.status.completionState=="Succeeded")]}{.status.provider.id}{"\n"}{end}' | sed -n 1p) # sed reads it all: head would end kubectl with SIGPIPE, which pipefail reports
  [ -n "$report" ] && break
  sleep 1
done
[ -n "$report" ] || { echo "no demo-report run succeeded within 180 s" >&2; exit 1; }
tkn pipelinerun logs "$report" -n team-a | grep -F '[report : main]'

step "team-b uses team-a's provider: refused until team-a allows it"
kubectl create namespace team-b --dry-run=client -o yaml | kubectl apply -f - >/dev/null
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
# The platform engineer changes the chart's values (so the next `make demo`'s install resets them).
helm upgrade kfp config/helm/kfp-tekton-provider --namespace team-a --reuse-values --set 'provider.allowedNamespaces={team-b}' >/dev/null
echo "helm upgrade kfp ... --set 'provider.allowedNamespaces={team-b}'"
kubectl wait -n team-b --for=condition=Ready experiment/shared-experiment --timeout=120s

step "every resource with its conditions"
for ns in team-a team-b; do
  kubectl get kfp -n "$ns" -o custom-columns='KIND:.kind,NAMESPACE:.metadata.namespace,NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,SYNCHRONIZED:.status.conditions[?(@.type=="Synchronized")].reason,PROVIDER ID:.status.provider.id'
done

step "the operations' PipelineRuns (tkn pipelinerun list -n team-a --label app.kubernetes.io/managed-by=kfp-tekton-operator)"
tkn pipelinerun list -n team-a --label app.kubernetes.io/managed-by=kfp-tekton-operator --limit 8

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

step "prgen: the operator's release at main, validated by Tekton's admission webhook (server dry run)"
echo "(the release Tasks need kaniko and git images and the internet; neither is here, so nothing is started)"
kubectl create namespace kfp-tekton-ci --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -n kfp-tekton-ci -f ci/tasks/ >/dev/null
go run ./cmd/prgen -f ci/releases.yaml -l app=operator,version=main | kubectl create --dry-run=server -f -

step "done"
echo "Everything keeps running. Look around with: make shell   (then kubectl, tkn, helm)"
echo "Stop it with: make cluster-down"
