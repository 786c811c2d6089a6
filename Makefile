# kfp-tekton-operator. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
HELM := $(BIN)/helm
GOLANGCI_LINT := $(BIN)/golangci-lint
OPERATOR_CHART := config/helm/kfp-tekton-operator
PROVIDER_CHART := config/helm/kfp-tekton-provider
# How long make fuzz runs each fuzz target: a count of executions, not a
# duration, since Go 1.26's fuzzer can fail a target with "context deadline
# exceeded" when a duration ends (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME ?= 5000x
SCALE_N ?= 1000
SCALE_FLAGS ?=
# Every fuzz target, PACKAGE:TARGET.
FUZZ_TARGETS := \
  ./cmd/prgen/release:FuzzParse \
  ./cmd/prgen/release:FuzzSelect \
  ./cmd/prgen/release:FuzzRunsPassTektonValidation \
  ./internal/cronspec:FuzzValidate \
  ./cmd/kfp-task:FuzzWrite \
  ./cmd/kfp-task:FuzzReport \
  ./cmd/kfp-task:FuzzTruncateEscaped \
  ./internal/contract:FuzzParamRoundTrip \
  ./internal/contract:FuzzDecodeParam \
  ./internal/kfpir:FuzzParseCompile \
  ./internal/artifactpath:FuzzParse \
  ./internal/naming:FuzzName \
  ./internal/naming:FuzzCompact \
  ./internal/naming:FuzzLabelValue \
  ./internal/runcompletion:FuzzDecode \
  ./internal/controller/lifecycle:FuzzProviderKey \
  ./internal/controller/lifecycle:FuzzObservePipeline \
  ./internal/controller/lifecycle:FuzzArtifactRepository \
  ./internal/controller/runconfiguration:FuzzPinPipeline
export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: help
help: ## List targets.
	@awk -F ':.*## ' '/^[a-z-]+:.*## /{printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) $(HELM) ## Regenerate CRDs, RBAC, the chart-rendered kustomize bases, and the shared Tasks.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	go run ./internal/conversionwebhook/gen config/crd/bases
	rm -f $(OPERATOR_CHART)/crds/*.yaml && cp config/crd/bases/*.yaml $(OPERATOR_CHART)/crds/
	$(CONTROLLER_GEN) rbac:roleName=kfp-tekton-operator,headerFile=hack/rbac-header.yaml paths=./internal/controller/... output:rbac:artifacts:config=config/rbac
	for chart in $(OPERATOR_CHART) $(PROVIDER_CHART); do mkdir -p $$chart/rbac && cp config/rbac/role.yaml $$chart/rbac/role.yaml; done
	{ echo "# Rendered from $(OPERATOR_CHART) by make manifests; DO NOT EDIT."; \
	  $(HELM) template kfp-tekton-operator $(OPERATOR_CHART) --namespace kfp-tekton-operator; } > config/default/operator.yaml
	{ echo "# Rendered from $(PROVIDER_CHART) with config/provider/values.yaml by make manifests; DO NOT EDIT."; \
	  $(HELM) template kfp-tekton-provider $(PROVIDER_CHART) --namespace team-a -f config/provider/values.yaml; } > config/provider/provider.yaml
	go run ./tasks/gen
	go run ./internal/contract/gen

.PHONY: verify
verify: generate manifests lint $(BIN)/go.mod ## Fail if generated files or formatting are out of date, or the lint fails.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...
	go vet -tags e2e ./e2e/
	@git diff --exit-code -- api config tasks pipelines || { echo "generated files are stale: run make generate manifests"; exit 1; }

# bin/ holds the local cluster's state (containerd's directories come and go
# while it runs): a go.mod makes it a module of its own, which ./... skips.
$(BIN)/go.mod:
	@mkdir -p $(BIN) && printf 'module build-output\n' >$@

.PHONY: lint
lint: $(GOLANGCI_LINT) $(BIN)/go.mod ## golangci-lint with .golangci.yml (function length, errors, docs, imports), and no Go file over 600 lines.
	$(GOLANGCI_LINT) run ./...
	go test ./ci -run '^TestGoFileSize$$' -count=1

.PHONY: test
test: envtest-assets $(BIN)/go.mod ## Every test: unit and envtest (real kube-apiserver + etcd), then end-to-end on the local real cluster.
	go test ./... -count=1
	./hack/e2e.sh

.PHONY: test-unit
test-unit: envtest-assets $(BIN)/go.mod ## Unit and envtest tests only (no cluster).
	go test ./... -count=1

.PHONY: e2e
e2e: ## The end-to-end suite on the local real cluster (brings it up and down unless it already runs).
	./hack/e2e.sh

.PHONY: bench chaos
bench: envtest-assets ## Run the benchmarks and print their figures.
	go test ./... -run '^$$' -bench . -benchmem
	go run ./bench/prgen -apps 1000 -versions 10
	go run ./bench/providers -providers 500 -namespaces 100
	go run ./bench/pipelines -pipelines 1000

.PHONY: fuzz
fuzz: ## Run every fuzz target briefly (FUZZTIME executions each, 5000x) (findings land in testdata/fuzz; go test ./... runs the seeds).
	@for target in $(FUZZ_TARGETS); do \
	  echo "go test $${target%%:*} -fuzz $${target##*:} -fuzztime $(FUZZTIME)"; \
	  go test $${target%%:*} -run '^$$' -fuzz "^$${target##*:}$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

.PHONY: bench-cluster bench-scale soak
chaos: ## The chaos suite on the running local cluster (leader kills, kube-apiserver restarts, Tekton stopped; CHAOS_ROUNDS, CHAOS_PER_KIND); run after make demo.
	./hack/cluster.sh exec env GOPROXY=off GOFLAGS=-mod=readonly CHAOS_ROUNDS=$${CHAOS_ROUNDS:-3} CHAOS_PER_KIND=$${CHAOS_PER_KIND:-8} \
	  go test -tags e2e,chaos -count=1 -timeout 60m -run TestChaos -v ./e2e/

soak: ## The chaos suite again and again for SOAK_DURATION (default 1h), SOAK_FLAGS e.g. -per-kind 20 -rounds 9; figures per iteration and overall; run after make demo.
	./hack/cluster.sh exec env GOPROXY=off GOFLAGS=-mod=readonly go run ./bench/soak -duration $${SOAK_DURATION:-1h} $(SOAK_FLAGS)

bench-scale: ## Operator overhead over Tekton with kwok's fake node (SCALE_N resources, SCALE_FLAGS e.g. -tekton-qps 100 -tekton-threads 8, or -fairness for a second namespace's latency during the burst); run after make demo.
	./hack/cluster.sh exec go run ./bench/scale -n $(SCALE_N) $(SCALE_FLAGS)

bench-cluster: ## Figures of the local real cluster (pod, TaskRun, operation latency; memory; CLUSTER_FLAGS=-breakdown -n 50 for where one operation's time goes); run after make demo.
	./hack/cluster.sh exec go run ./bench/cluster $${CLUSTER_FLAGS:--n 10}

##@ Local cluster

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd into bin/ for envtest (cached).
	./hack/build-cluster.sh envtest

.PHONY: cluster-up
cluster-up: ## Start the local real cluster (node, Tekton); then: hack/cluster.sh shell.
	./hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove every trace of it.
	./hack/cluster.sh down

.PHONY: shell
shell: ## A shell inside the local cluster's network namespace (kubectl, tkn, helm work there).
	./hack/cluster.sh shell

$(HELM): hack/tools/helm/go.mod
	cd hack/tools/helm && go build -trimpath -ldflags "-s -w" -o $(HELM) helm.sh/helm/v4/cmd/helm

$(CONTROLLER_GEN): hack/tools/controller-gen/go.mod
	cd hack/tools/controller-gen && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

$(GOLANGCI_LINT): hack/tools/golangci-lint/go.mod
	cd hack/tools/golangci-lint && go build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

##@ Main job

.PHONY: demo
demo: $(HELM) ## The main job on the local real cluster (see docs/demo.md).
	./hack/demo.sh
