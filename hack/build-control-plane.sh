#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy into bin/ (DESIGN §9).
# Binaries already present at the pinned version are reused, so a warm run is instant.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN_DIR:-$root/bin}
kube_version=v1.35.4
etcd_version=v3.6.8
mkdir -p "$bin"
# Parallel test packages may call this at once: build one at a time.
exec 9>"$bin/.build.lock"
flock 9

# stamp records the version a binary was built at; a mismatch forces a rebuild.
fresh() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]; }

if ! fresh kube-apiserver "$kube_version"; then
  echo "building kube-apiserver $kube_version (cold: ~12 min on 2 cores)" >&2
  minor=${kube_version#v1.}; minor=${minor%%.*}
  ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  done
  (cd "$root/hack/tools/kube-apiserver" &&
    go build -trimpath -ldflags "-s -w $ldflags" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
  echo "$kube_version" > "$bin/.kube-apiserver.version"
fi

if ! fresh etcd "$etcd_version"; then
  echo "building etcd $etcd_version" >&2
  (cd "$root/hack/tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
  echo "$etcd_version" > "$bin/.etcd.version"
fi
