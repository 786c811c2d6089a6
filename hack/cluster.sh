#!/usr/bin/env bash
# The local default cluster (DESIGN §9): a real single node with real Tekton,
# inside one private network + mount namespace. Run as root.
#
#   hack/cluster.sh up       build what is missing, start the cluster, install Tekton
#                            and the S3 artifact store (hack/artifact-store.sh)
#   hack/cluster.sh down     stop everything and remove every trace (state, cgroups, processes)
#   hack/cluster.sh exec CMD run CMD inside the cluster's network namespace, with
#                            KUBECONFIG set and bin/ (kubectl plugins, tkn, helm) on PATH
#   hack/cluster.sh shell    an interactive shell there
#   hack/cluster.sh status   whether it runs
#
# The API server, the registry and every pod listen only inside the namespace,
# so kubectl and tkn work through `exec` or `shell`.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
state=$bin/cluster
pidfile=$bin/cluster.pid
netnsfile=$bin/cluster.netns
log=$bin/cluster.log
kubeconfig=$bin/kubeconfig

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

in_ns() {
  running || { echo "the local cluster is not running: make cluster-up" >&2; exit 1; }
  nsenter -t "$(cat "$pidfile")" -n -- env KUBECONFIG="$kubeconfig" PATH="$bin:$PATH" "$@"
}

ensure_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  [ -x /bin/busybox ] && ldd /bin/busybox >/dev/null 2>&1 && missing+=(busybox-static)
  [ -x /bin/busybox ] || missing+=(busybox-static)
  [ ${#missing[@]} -eq 0 ] && return
  echo "installing Debian packages: ${missing[*]}" >&2
  apt-get update -qq
  # No service is started: the cluster runs containerd itself, inside its namespace.
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

up() {
  [ "$(id -u)" = 0 ] || { echo "the local cluster needs root (namespaces, mounts, cgroups)" >&2; exit 1; }
  if running; then echo "already running (pid $(cat "$pidfile")); hack/cluster.sh shell"; return; fi
  [ -f "$netnsfile" ] && down >/dev/null  # a crashed cluster's leftovers
  # The cgroup root is machine-wide: one local cluster at a time.
  if find /sys/fs/cgroup/*/kfp-tekton-local -name cgroup.procs -exec grep -l . {} + 2>/dev/null | grep -q .; then
    echo "another local cluster (from another checkout?) is running: stop it with its make cluster-down first" >&2
    exit 1
  fi
  ensure_packages
  "$root/hack/build-cluster.sh"
  (cd "$root" && go build -o "$bin/localcluster" ./cmd/localcluster &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/pause" ./internal/localcluster/pause)
  (cd "$root/hack/tools/tekton" && go mod download)  # ko builds Tekton offline, inside the namespace

  local started=$SECONDS
  rm -rf "$state" && mkdir -p "$state"
  nohup unshare -n -m --propagation private -- "$bin/localcluster" run \
    --dir "$state" --bin "$bin" --pause "$bin/pause" \
    --host-netns "$(readlink /proc/self/ns/net)" --host-mntns "$(readlink /proc/self/ns/mnt)" >"$log" 2>&1 &
  echo $! >"$pidfile"
  local host_netns; host_netns=$(readlink /proc/self/ns/net)
  for _ in $(seq 1 50); do
    ns=$(readlink "/proc/$(cat "$pidfile")/ns/net" 2>/dev/null || true)
    [ -n "$ns" ] && [ "$ns" != "$host_netns" ] && { echo "$ns" >"$netnsfile"; break; }
    sleep 0.1
  done
  until [ -f "$state/ready" ]; do
    if ! running; then echo "the local cluster failed to start:" >&2; tail -20 "$log" >&2; cleanup; exit 1; fi
    [ $((SECONDS - started)) -lt 240 ] || { echo "the local cluster did not start in 240 s; see $log and $state/logs" >&2; exit 1; }
    sleep 0.5
  done
  cp "$state/kubeconfig/admin" "$kubeconfig"
  echo "cluster processes ready in $((SECONDS - started)) s"
  in_ns kubectl wait --for=condition=Ready node --all --timeout=120s >/dev/null
  in_ns "$root/hack/tekton.sh"
  in_ns "$root/hack/artifact-store.sh"
  echo "local cluster up in $((SECONDS - started)) s (node Ready, Tekton ready); use: hack/cluster.sh shell"
}

# cleanup removes what a dead supervisor may have left: processes in its
# network namespace and the cluster's cgroups.
cleanup() {
  if [ -f "$netnsfile" ] && [ -x "$bin/localcluster" ]; then
    "$bin/localcluster" cleanup --netns "$(cat "$netnsfile")" || true
  fi
  rm -f "$pidfile" "$netnsfile" "$kubeconfig"
}

down() {
  if running; then
    local pid; pid=$(cat "$pidfile")
    kill -TERM "$pid"
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  cleanup
  # Overlay snapshots were mounted only inside the namespace, which is gone.
  rm -rf "$state"
  check_clean
  echo "local cluster stopped; nothing left running"
}

# check_clean fails if anything of the cluster survived.
check_clean() {
  local left=0
  for h in /sys/fs/cgroup/*/kfp-tekton-local /sys/fs/cgroup/kfp-tekton-local; do
    [ -e "$h" ] && { echo "left behind: cgroup $h" >&2; left=1; }
  done
  # Every process of the cluster names its state directory in its arguments.
  if pgrep -f "$state/" >/dev/null; then
    echo "left behind: $(pgrep -af "$state/")" >&2; left=1
  fi
  return $left
}

case "${1:-}" in
up) up ;;
down) down ;;
exec) shift; in_ns "$@" ;;
shell) in_ns bash -c 'echo "inside the local cluster: kubectl, tkn and helm work; exit to leave"; exec bash -i' ;;
status) if running; then echo "running (pid $(cat "$pidfile"))"; else echo "not running"; exit 1; fi ;;
*) echo "usage: $0 up|down|exec CMD...|shell|status" >&2; exit 2 ;;
esac
