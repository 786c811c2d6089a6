#!/usr/bin/env bash
# Installs Tekton Pipelines v1.15.1 into the local cluster, as its release
# does: `ko resolve` of Tekton's own config/ (controller, webhook, events
# controller and the step images built from the module proxy into the local
# registry), applied with kubectl. Runs inside the cluster's namespace
# (hack/cluster.sh up calls it through `hack/cluster.sh exec`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
registry=10.200.0.1:5000
module=$root/hack/tools/tekton
tekton=$(cd "$module" && go list -m -f '{{.Dir}}' github.com/tektoncd/pipeline)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

started=$SECONDS
# Tekton's release config minus its remote resolvers (shared Tasks are referenced by name).
mkdir -p "$work/config"
cp "$tekton"/config/100-namespace/*.yaml "$tekton"/config/300-crds/*.yaml "$tekton"/config/*.yaml "$work/config/"
# The shell image (script steps only) comes from the local registry, like every image here.
sed -i -e "s#\"-shell-image\", \"[^\"]*\"#\"-shell-image\", \"$registry/base/busybox:latest\"#" \
  -e "s#\"-shell-image-win\", \"[^\"]*\"#\"-shell-image-win\", \"$registry/base/busybox:latest\"#" "$work/config/controller.yaml"
(cd "$module" && GOPROXY=off GOFLAGS=-mod=readonly KO_DOCKER_REPO=$registry/tekton \
  KO_DEFAULTBASEIMAGE=$registry/base/static:latest \
  ko resolve --base-import-paths --platform=linux/amd64 -f "$work/config" >"$work/tekton.yaml" 2>"$work/ko.log") ||
  { cat "$work/ko.log" >&2; exit 1; }
if grep -nE 'image: *[^ ]*(gcr\.io|cgr\.dev|mcr\.microsoft|docker\.io|ko://)' "$work/tekton.yaml"; then
  echo "Tekton's config still names an image outside the local registry" >&2; exit 1
fi
echo "Tekton images built with ko in $((SECONDS - started)) s"

kubectl apply --server-side --force-conflicts -f "$work/tekton.yaml" >/dev/null
# Without this flag no shared Task runs in a namespace that enforces Pod
# Security `restricted`: Tekton's own init containers then carry no securityContext.
# coschedule=disabled: one node, so no affinity-assistant pods are needed to
# keep a run's tasks beside the volume they share (the Tekton provider's
# artifact workspace).
kubectl patch configmap feature-flags -n tekton-pipelines --type merge \
  -p '{"data":{"set-security-context":"true","coschedule":"disabled"}}' >/dev/null
kubectl rollout status -n tekton-pipelines deploy/tekton-pipelines-controller deploy/tekton-pipelines-webhook --timeout=180s
# The webhook is serving once it has written its CA into its configurations.
for _ in $(seq 1 120); do
  ca=$(kubectl get validatingwebhookconfiguration validation.webhook.pipeline.tekton.dev -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null || true)
  [ -n "$ca" ] && kubectl create --dry-run=server -f - >/dev/null 2>&1 <<'YAML' && break
apiVersion: tekton.dev/v1
kind: TaskRun
metadata: {name: webhook-probe, namespace: default}
spec: {taskSpec: {steps: [{name: probe, image: busybox}]}}
YAML
  sleep 1
done
echo "Tekton v1.15.1 ready in $((SECONDS - started)) s"
