# kfp-tekton-operator. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: help
help: ## List targets.
	@awk -F ':.*## ' '/^[a-z-]+:.*## /{printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Regenerate CRDs and RBAC under config/, and the shared Tasks under tasks/.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	go run ./tasks/gen tasks

.PHONY: verify
verify: generate manifests ## Fail if generated files or formatting are out of date.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...
	@git diff --exit-code -- api config tasks || { echo "generated files are stale: run make generate manifests"; exit 1; }

.PHONY: test
test: envtest-assets ## Run every test against a real kube-apiserver and etcd (builds them on first use).
	go test ./... -count=1

.PHONY: bench
bench: envtest-assets ## Run the benchmarks and print their figures.
	go test ./... -run '^$$' -bench . -benchmem
	go run ./bench/prgen -apps 1000 -versions 10

##@ Local control plane

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd into bin/ (cached).
	./hack/build-control-plane.sh

.PHONY: cluster-up
cluster-up: envtest-assets ## Start a local control plane with all CRDs; writes bin/kubeconfig.
	./hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local control plane.
	./hack/cluster.sh down

$(CONTROLLER_GEN): hack/tools/controller-gen/go.mod
	cd hack/tools/controller-gen && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

##@ Main job

.PHONY: demo
demo: envtest-assets ## The main job on the local control plane (see README).
	./hack/demo.sh
