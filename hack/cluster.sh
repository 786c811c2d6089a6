#!/usr/bin/env bash
# Starts (up) or stops (down) the local control plane in the background.
# After `up`, use it with: export KUBECONFIG=$PWD/bin/kubeconfig
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
pidfile=$bin/localcluster.pid
kubeconfig=$bin/kubeconfig
log=$bin/localcluster.log

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "${1:-}" in
up)
  if running; then echo "already running (pid $(cat "$pidfile")); KUBECONFIG=$kubeconfig"; exit 0; fi
  "$root/hack/build-control-plane.sh"
  (cd "$root" && go build -o "$bin/localcluster" ./cmd/localcluster)
  rm -f "$kubeconfig"
  nohup "$bin/localcluster" -kubeconfig-out "$kubeconfig" >"$log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 120); do
    if [ -f "$kubeconfig" ]; then
      echo "local control plane is up; export KUBECONFIG=$kubeconfig"
      exit 0
    fi
    if ! running; then echo "local control plane failed to start:" >&2; cat "$log" >&2; exit 1; fi
    sleep 0.5
  done
  echo "local control plane did not become ready in 60s; see $log" >&2
  exit 1
  ;;
down)
  # The demo's operator, if any, goes first.
  if [ -f "$bin/operator.pid" ]; then
    kill "$(cat "$bin/operator.pid")" 2>/dev/null || true
    rm -f "$bin/operator.pid"
  fi
  if running; then
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$pidfile" "$kubeconfig"
  echo "local control plane stopped"
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
