#!/usr/bin/env bash
# Builds every binary the local cluster and the tests need from the Go module
# proxy into bin/ (DESIGN §9): kube-apiserver, kube-controller-manager,
# kube-scheduler, kube-proxy, kubelet (v1.35.4), etcd (v3.6.8), ko, tkn, kwok,
# helm and weed, the SeaweedFS S3 store of the local cluster (cold: ~20 min).
# Each is stamped with the version of the wrapper module it came from
# (hack/tools/*), so a warm run is instant and a changed pin rebuilds.
#   hack/build-cluster.sh            everything
#   hack/build-cluster.sh envtest    only kube-apiserver and etcd (envtest)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN_DIR:-$root/bin}
tools=$root/hack/tools
mkdir -p "$bin"
# Parallel test packages may call this at once: build one at a time.
exec 9>"$bin/.build.lock"
flock 9

# stamp is the hash of a wrapper module's go.mod and go.sum: a changed pin rebuilds.
stamp() { cat "$tools/$1/go.mod" "$tools/$1/go.sum" | sha256sum | cut -c1-16; }
fresh() { local f; for f in "${@:2}"; do [ -x "$bin/$f" ] && [ "$(cat "$bin/.$f.stamp" 2>/dev/null)" = "$(stamp "$1")" ] || return 1; done; }
mark() { local f; for f in "${@:2}"; do stamp "$1" >"$bin/.$f.stamp"; done; }

build_kubernetes() {
  local version=v1.35.4 ldflags="" pkg cmds=("$@")
  fresh kubernetes "${cmds[@]}" && return
  echo "building ${cmds[*]} $version (cold: ~10 min on 2 cores)" >&2
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=35"
  done
  (cd "$tools/kubernetes" && go build -trimpath -ldflags "-s -w $ldflags" -o "$bin/" "${cmds[@]/#/k8s.io/kubernetes/cmd/}")
  mark kubernetes "${cmds[@]}"
}

# build MODULE OUTPUT PACKAGE: one binary from a wrapper module.
build() {
  fresh "$1" "$2" && return
  echo "building $2 ($3)" >&2
  (cd "$tools/$1" && go build -trimpath -ldflags "-s -w" -o "$bin/$2" "$3")
  mark "$1" "$2"
}

build etcd etcd go.etcd.io/etcd/server/v3
if [ "${1:-all}" = envtest ]; then
  build_kubernetes kube-apiserver
  exit 0
fi
build_kubernetes kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet
build helm helm helm.sh/helm/v4/cmd/helm
build ko ko github.com/google/ko
build tkn tkn github.com/tektoncd/cli/cmd/tkn
build kwok kwok sigs.k8s.io/kwok/cmd/kwok
# The local artifact store (hack/artifact-store.sh) runs in a static image.
CGO_ENABLED=0 build seaweedfs weed github.com/seaweedfs/seaweedfs/weed
