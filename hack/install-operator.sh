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

image() { "$bin/localcluster" image --base "$base" "$@"; }
operator=$(image --file /operator="$out/operator" --file /kfp-task="$out/kfp-task" --push "$registry/kfp-tekton-operator:dev")
provider=$(image --file /provider="$out/fixture-provider" --push "$registry/fixtures/provider:dev")
compiler=$(image --file /compiler="$out/fixture-compiler" --push "$registry/fixtures/compiler:dev")
# A pipeline image for the fixture compiler to compile in: it needs nothing of its own.
pipeline=$(image --file /pause="$bin/pause" --push "$registry/fixtures/pipeline:1")
cat >"$bin/images.env" <<ENV
REGISTRY=$registry
OPERATOR_IMAGE=$operator
FIXTURE_PROVIDER_IMAGE=$provider
FIXTURE_COMPILER_IMAGE=$compiler
FIXTURE_PIPELINE_IMAGE=$registry/fixtures/pipeline:1
ENV
echo "images pushed in $((SECONDS - started)) s: $operator"

"$bin/helm" upgrade --install kfp-tekton-operator config/helm/kfp-tekton-operator \
  --namespace kfp-tekton-operator --create-namespace \
  --set image.repository="${operator%@*}" --set image.digest="${operator#*@}" \
  --wait --timeout 180s >/dev/null
kubectl rollout status -n kfp-tekton-operator deploy/kfp-tekton-operator --timeout=180s
echo "operator installed with its chart in $((SECONDS - started)) s"
