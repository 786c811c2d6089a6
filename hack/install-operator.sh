#!/usr/bin/env bash
# Builds the operator image (/operator and the Tasks' /kfp-task helper) and
# the contract-test fixture images, pushes them to the local registry, and
# installs the operator with its own Helm chart. Runs inside the cluster's
# namespace: `hack/cluster.sh exec hack/install-operator.sh`.
# Writes the image references to bin/images.env for the demo and the e2e suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
registry=10.200.0.1:5000
base=$registry/base/static:latest
out=$bin/images
mkdir -p "$out"
cd "$root"

started=$SECONDS
export CGO_ENABLED=0 GOPROXY=off GOFLAGS=-mod=readonly
go build -trimpath -ldflags "-s -w" -o "$out/" ./cmd/operator ./cmd/kfp-task
go build -trimpath -ldflags "-s -w" -o "$out/fixture-provider" ./internal/testfixtures/provider
go build -trimpath -ldflags "-s -w" -o "$out/fixture-compiler" ./internal/testfixtures/compiler
go build -trimpath -ldflags "-s -w" -o "$out/fixture-provider-service" ./internal/testfixtures/providerservice
go build -trimpath -ldflags "-s -w" -o "$out/fixture-kfp-python" ./internal/testfixtures/kfpexecutor
go build -trimpath -ldflags "-s -w" -o "$out/" ./cmd/tekton-provider ./cmd/static-compiler ./cmd/kfp-demo

image() { "$bin/localcluster" image --base "$base" "$@"; }
operator=$(image --file /operator="$out/operator" --file /kfp-task="$out/kfp-task" --entrypoint /kfp-task --push "$registry/kfp-tekton-operator:dev")
provider=$(image --file /provider="$out/fixture-provider" --push "$registry/fixtures/provider:dev")
compiler=$(image --file /compiler="$out/fixture-compiler" --push "$registry/fixtures/compiler:dev")
provider_service=$(image --file /provider-service="$out/fixture-provider-service" --push "$registry/fixtures/provider-service:dev")
# A pipeline image for the fixture compiler to compile in: it needs nothing of its own.
pipeline=$(image --file /pause="$bin/pause" --push "$registry/fixtures/pipeline:1")
# The product's backend and compiler: the Tekton provider, whose image is also
# the launcher of compiled pipelines (/kfp/bin/kfp-task), and the static compiler.
tekton_provider=$(image --file /provider="$out/tekton-provider" --file /kfp/bin/kfp-task="$out/kfp-task" --push "$registry/tekton-provider:dev")
static_compiler=$(image --file /compiler="$out/static-compiler" --push "$registry/compilers/static:dev")
# The demo ML pipeline: its steps' image, then the pipeline image holding the
# compiled IR that names that image by digest (what the static compiler reads).
kfp_demo=$(image --file /ko-app/kfp-demo="$out/kfp-demo" --push "$registry/samples/kfp-demo:dev")
for ir in pipeline consumer; do
  sed "s#image: kfp-demo:latest#image: $kfp_demo#" "cmd/kfp-demo/$ir.yaml" >"$out/demo-$ir.yaml"
  grep -q "$kfp_demo" "$out/demo-$ir.yaml" || { echo "cmd/kfp-demo/$ir.yaml names no kfp-demo:latest image" >&2; exit 1; }
done
# A Python-function-shaped pipeline, as the KFP SDK compiles it, for the
# e2e suite: its image is the kfpexecutor fixture as sh and python3.
kfp_python=$(image --file /bin/sh="$out/fixture-kfp-python" --file /usr/local/bin/python3="$out/fixture-kfp-python" \
  --push "$registry/fixtures/kfp-python:dev")
sed "s#image: python:3.12#image: $kfp_python#" internal/testfixtures/kfpexecutor/pipeline.yaml >"$out/python-pipeline.yaml"
for ir in control_flow exit_handler exit_pipeline secret_env importer pvc; do
  sed "s#image: python:3.12#image: $kfp_python#" "internal/testfixtures/kfpexecutor/$ir.yaml" >"$out/$ir-pipeline.yaml"
done
demo_pipeline=$(image --file /pipeline.yaml="$out/demo-pipeline.yaml" --file /consumer.yaml="$out/demo-consumer.yaml" \
  --file /python.yaml="$out/python-pipeline.yaml" --file /control-flow.yaml="$out/control_flow-pipeline.yaml" \
  --file /exit-handler.yaml="$out/exit_handler-pipeline.yaml" --file /secret-env.yaml="$out/secret_env-pipeline.yaml" \
  --file /importer.yaml="$out/importer-pipeline.yaml" --file /pvc.yaml="$out/pvc-pipeline.yaml" \
  --file /exit-pipeline.yaml="$out/exit_pipeline-pipeline.yaml" \
  --push "$registry/samples/demo-pipeline:1.0")
cat >"$bin/images.env" <<ENV
REGISTRY=$registry
OPERATOR_IMAGE=$operator
FIXTURE_PROVIDER_IMAGE=$provider
FIXTURE_COMPILER_IMAGE=$compiler
FIXTURE_PROVIDER_SERVICE_IMAGE=$provider_service
FIXTURE_PIPELINE_IMAGE=$registry/fixtures/pipeline:1
FIXTURE_KFP_PYTHON_IMAGE=$kfp_python
TEKTON_PROVIDER_IMAGE=$tekton_provider
STATIC_COMPILER_IMAGE=$static_compiler
KFP_DEMO_IMAGE=$kfp_demo
DEMO_PIPELINE_IMAGE=$registry/samples/demo-pipeline:1.0
DEMO_PIPELINE_DIGEST_REF=$demo_pipeline
ENV
echo "images pushed in $((SECONDS - started)) s: $operator"

# Helm installs a chart's CRDs but never upgrades them: apply the current ones first.
kubectl apply --server-side --force-conflicts -f config/crd/bases >/dev/null
"$bin/helm" upgrade --install kfp-tekton-operator config/helm/kfp-tekton-operator \
  --namespace kfp-tekton-operator --create-namespace \
  --set image.repository="${operator%@*}" --set image.digest="${operator#*@}" \
  --set events.clusterIP=10.96.0.50 --set events.url=http://10.96.0.50/events \
  --wait --timeout 180s >/dev/null
kubectl rollout status -n kfp-tekton-operator deploy/kfp-tekton-operator --timeout=180s
echo "operator installed with its chart in $((SECONDS - started)) s"
