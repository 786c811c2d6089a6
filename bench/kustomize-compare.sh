#!/usr/bin/env bash
# Builds the kustomize layout that seed 004 describes (one base PipelineRun,
# one overlay per application × version, a root that includes every overlay
# for a bulk trigger) for APPS × VERSIONS, times `kubectl kustomize` on the
# root, and times prgen on the equivalent matrix. Prints both; asserts nothing.
#   bench/kustomize-compare.sh 100 10
set -euo pipefail
apps=${1:-100}
versions=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/base"
cat >"$work/base/kustomization.yaml" <<YAML
resources: [pipelinerun.yaml]
YAML
# The base is one run of the release shape, as prgen prints it, with a fixed
# name (kustomize cannot use generateName).
matrix="$work/one.yaml"
cat >"$matrix" <<YAML
manifestsRepo: https://example.com/org/manifests.git
applications: [{name: app, repo: https://example.com/org/app.git, image: registry.example.com/org/app, manifests: apps/app}]
versions: [{name: main, revision: main, manifestsBranch: main}]
YAML
(cd "$root" && go run ./cmd/prgen -f "$matrix") | sed 's/generateName: app-main-/name: release/' >"$work/base/pipelinerun.yaml"

big="$work/matrix.yaml"
{
  echo "manifestsRepo: https://example.com/org/manifests.git"
  echo "applications:"
  for a in $(seq 1 "$apps"); do
    echo "  - {name: app-$a, repo: https://example.com/org/app-$a.git, image: registry.example.com/org/app-$a, manifests: apps/app-$a}"
  done
  echo "versions:"
  for v in $(seq 1 "$versions"); do echo "  - {name: v0.$v, revision: release-0.$v, manifestsBranch: release-0.$v}"; done
} >"$big"

echo "resources:" >"$work/kustomization.yaml"
for a in $(seq 1 "$apps"); do
  for v in $(seq 1 "$versions"); do
    d="$work/overlays/app-$a-v0.$v"
    mkdir -p "$d"
    cat >"$d/kustomization.yaml" <<YAML
resources: [../../base]
nameSuffix: -app-$a-v0-$v
labels:
  - pairs: {app: app-$a, version: v0.$v, type: run}
patches:
  - target: {kind: PipelineRun}
    patch: |-
      - {op: replace, path: /spec/params/0/value, value: app-$a}
      - {op: replace, path: /spec/params/1/value, value: v0.$v}
      - {op: replace, path: /spec/params/2/value, value: https://example.com/org/app-$a.git}
      - {op: replace, path: /spec/params/3/value, value: release-0.$v}
      - {op: replace, path: /spec/params/4/value, value: registry.example.com/org/app-$a:v0.$v}
      - {op: replace, path: /spec/params/6/value, value: release-0.$v}
      - {op: replace, path: /spec/params/7/value, value: apps/app-$a}
YAML
    echo "  - overlays/app-$a-v0.$v" >>"$work/kustomization.yaml"
  done
done

n=$((apps * versions))
(cd "$root" && go build -o "$work/prgen" ./cmd/prgen)
start=$(date +%s%N); kubectl kustomize "$work" >"$work/kustomize.out"; end=$(date +%s%N)
k_ms=$(((end - start) / 1000000))
start=$(date +%s%N); "$work/prgen" -f "$big" >"$work/prgen.out"; end=$(date +%s%N)
p_ms=$(((end - start) / 1000000))
echo "runs: $n ($apps applications × $versions versions)"
echo "kubectl kustomize (one overlay per pair, bulk root): ${k_ms} ms, $(grep -c '^kind: PipelineRun' "$work/kustomize.out") runs, $(find "$work/overlays" -type f | wc -l) overlay files"
echo "prgen (one matrix file):                             ${p_ms} ms, $(grep -c '^kind: PipelineRun' "$work/prgen.out") runs, 1 file"
echo "ratio kustomize/prgen: $(awk -v k="$k_ms" -v p="$p_ms" 'BEGIN { printf "%.1f", k / (p > 0 ? p : 1) }')"
