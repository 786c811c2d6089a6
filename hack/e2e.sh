#!/usr/bin/env bash
# The end-to-end suite on the local real cluster: brings the cluster up
# (unless it already runs, then leaves it running), installs the operator
# with its chart and runs ./e2e inside the cluster's namespace, then a small
# scale run and a bounded chaos round (unless E2E_RUN picks tests). A cluster this
# script started is stopped again, whatever the outcome.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ./hack/cluster.sh status >/dev/null 2>&1; then
  echo "using the running local cluster"
else
  trap './hack/cluster.sh down' EXIT
  ./hack/cluster.sh up
fi
go mod download  # the namespace has no route to the module proxy
./hack/cluster.sh exec ./hack/install-operator.sh
set +e
./hack/cluster.sh exec env GOPROXY=off GOFLAGS=-mod=readonly \
  go test -tags e2e -count=1 -timeout 60m ${E2E_RUN:+-run "$E2E_RUN"} -v ./e2e/ 2>&1 | tee "$root/bin/e2e.log"
status=${PIPESTATUS[0]}
# A small scale run (bench/scale: kwok's fake node beside the real one), so
# the benchmark keeps working; make bench-scale runs the measured sizes.
if [ "$status" = 0 ] && [ -z "${E2E_RUN:-}" ]; then
  ./hack/cluster.sh exec env GOPROXY=off GOFLAGS=-mod=readonly \
    go run ./bench/scale -n "${SCALE_SMOKE_N:-50}" -timeout 10m 2>&1 | tee "$root/bin/scale-smoke.log"
  status=${PIPESTATUS[0]}
fi
# Then a bounded chaos round (e2e/chaos_test.go; make chaos runs a longer
# one): each fault once (the leader, kube-apiserver, Tekton's controller)
# with a provider fixed midway, then everything deleted. Last, as it kills
# the operator and the API server. CHAOS_ROUNDS=0 skips it.
if [ "$status" = 0 ] && [ -z "${E2E_RUN:-}" ] && [ "${CHAOS_ROUNDS:-3}" != 0 ]; then
  ./hack/cluster.sh exec env GOPROXY=off GOFLAGS=-mod=readonly CHAOS_ROUNDS="${CHAOS_ROUNDS:-3}" CHAOS_PER_KIND="${CHAOS_PER_KIND:-3}" \
    go test -tags e2e,chaos -count=1 -timeout 30m -run TestChaos -v ./e2e/ 2>&1 | tee "$root/bin/chaos.log"
  status=${PIPESTATUS[0]}
fi
set -e
exit "$status"
