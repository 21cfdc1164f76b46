# otelcol-k8s: build, generate, test and run the distribution and its components.
# `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := build

GO        ?= go
REAL_GO   := $(shell command -v $(GO))
TOOLS_BIN := $(CURDIR)/.tools/bin
BIN       := $(CURDIR)/bin/otelcol-k8s
KUBE_BIN  := $(CURDIR)/bin/kube-local
LOCALCW_BIN := $(CURDIR)/bin/localcloudwatch
KUBE_NODE_BIN := $(CURDIR)/bin/kube-node
# The Kubernetes release the API server and the node programs are built from, stamped into them
# as the release build does: clients read it (Helm checks a chart's kubeVersion against it; the
# Node reports it), and an unstamped build says v0.0.0-master.
KUBE_VERSION  := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2; exit }' testbed/kubecluster/server/go.mod)
KUBE_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(KUBE_VERSION_PARTS)) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(KUBE_VERSION_PARTS)) \
	-X k8s.io/component-base/version.gitTreeState=clean
DIST_DIR  := cmd/otelcol-k8s
NODE_BIN  := $(CURDIR)/bin/otelcol-k8s-node
NODE_DIR  := cmd/otelcol-k8s-node
CONFIG    ?= config/local.yaml
FUZZTIME  ?= 10s
BENCHTIME ?= 1s

BUILDER       := $(TOOLS_BIN)/builder
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint
GOFUMPT       := $(TOOLS_BIN)/gofumpt
GOIMPORTS     := $(TOOLS_BIN)/goimports

# Components are the folders with a metadata.yaml; modules are the folders with a go.mod.
# internal/tools only pins tools; testbed/bench modules hold side-by-side benchmarks (make bench);
# the generated distribution is checked by check-generated and test-dist; testbed/kubecluster/server
# is the local Kubernetes API server (make kube-bin), without tests of its own.
COMPONENT_DIRS := $(patsubst %/,%,$(sort $(dir $(shell find . -name metadata.yaml -not -path './.tools/*' -not -path './$(DIST_DIR)/*' -not -path './$(NODE_DIR)/*' -not -path '*/testdata/*'))))
ALL_MODULES    := $(patsubst %/,%,$(sort $(dir $(shell find . -name go.mod -not -path './.tools/*' -not -path './tmp/*' -not -path '*/testdata/*'))))
TEST_MODULES   := $(filter-out ./internal/tools ./$(DIST_DIR) ./$(NODE_DIR) ./testbed/bench/% ./testbed/kubecluster/server ./testbed/kubenode/node,$(ALL_MODULES))
BENCH_MODULES  := $(filter ./testbed/bench/%,$(ALL_MODULES))

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

## ---- tools (pinned in internal/tools/go.mod, installed from the module proxy) ----

$(TOOLS_BIN)/%: internal/tools/go.mod internal/tools/go.sum
	@mkdir -p $(TOOLS_BIN)
	cd internal/tools && GOBIN=$(TOOLS_BIN) $(GO) install $$($(GO) list -f '{{.ImportPath}}' tool | grep -E '/$*$$')

.PHONY: tools
tools: $(BUILDER) $(GOLANGCI_LINT) $(GOFUMPT) $(GOIMPORTS) ## install the pinned tools into .tools/bin

## ---- generated code ----

.PHONY: generate
generate: generate-metadata generate-dist ## regenerate component metadata and the ocb distribution sources

.PHONY: generate-metadata
generate-metadata:
	$(GO) run ./internal/mdgen $(COMPONENT_DIRS)

# ocb runs `go mod tidy`, which the module mirror makes fail on a refused test-only dependency;
# internal/buildtools/go adds -e to that one command.
.PHONY: generate-dist
generate-dist: $(BUILDER)
	PATH="$(CURDIR)/internal/buildtools:$$PATH" REAL_GO="$(REAL_GO)" \
		$(BUILDER) --config builder-config.yaml --skip-compilation
	PATH="$(CURDIR)/internal/buildtools:$$PATH" REAL_GO="$(REAL_GO)" \
		$(BUILDER) --config builder-config-node.yaml --skip-compilation

.PHONY: check-generated
check-generated: ## fail if any generated file differs from what the generators write
	$(GO) run ./internal/mdgen -check $(COMPONENT_DIRS)
	$(MAKE) --no-print-directory generate-dist
	@if [ -n "$$(git status --porcelain --untracked-files=all -- $(DIST_DIR) $(NODE_DIR))" ]; then \
		git status --short -- $(DIST_DIR) $(NODE_DIR); git --no-pager diff --stat -- $(DIST_DIR) $(NODE_DIR); \
		echo "$(DIST_DIR) or $(NODE_DIR) is stale: run 'make generate' and commit the result"; exit 1; fi

# deploy/kubernetes is the Helm chart (deploy/helm/otelcol-k8s) rendered with the values of
# deploy/kubernetes/chart-values.yaml by Helm's Go library, and deploy/kubernetes/traces the same
# with traces/chart-values.yaml over them (tracing on); testbed/install's tests fail on drift.
.PHONY: manifests
manifests: ## re-render the plain manifests of deploy/kubernetes from the Helm chart
	cd testbed/install && $(GO) run ./cmd/manifests -root $(CURDIR)

## ---- versions and releases (versions.yaml, internal/modset) ----

# One version set: the modules of versions.yaml's module set are released together at its
# version, tagged <module folder>/<version>; every go.mod and builder configuration of the
# repository requires them at that version (with replace lines for development here, which a
# consumer's build ignores). A released module never requires a testbed module.
MODSET := $(GO) run ./internal/modset/cmd/modset

.PHONY: check-versions
check-versions: ## fail when a go.mod or builder configuration disagrees with versions.yaml
	$(MODSET) check

.PHONY: versions
versions: ## rewrite the requirements on released modules to versions.yaml's version (VERSION=vX.Y.Z changes it first), then regenerate the distribution
	$(if $(VERSION),$(MODSET) set-version $(VERSION),$(MODSET) sync)
	$(MAKE) --no-print-directory generate-dist

# make release: tags every released module at HEAD (annotated, never pushed); VERSION, when
# given, must be versions.yaml's (change it with `make versions VERSION=...` and commit first).
.PHONY: release
release: ## check the version set and create the git tags <module folder>/<version> at HEAD (not pushed)
	@v=$$(awk '/^ +version:/ {print $$2; exit}' versions.yaml); \
	if [ -n "$(VERSION)" ] && [ "$(VERSION)" != "$$v" ]; then \
		echo "versions.yaml says $$v: run 'make versions VERSION=$(VERSION)', commit, then make release"; exit 1; fi
	$(MAKE) --no-print-directory check-generated
	$(MODSET) tag

## ---- build and run ----

.PHONY: build
build: generate-dist ## generate and compile bin/otelcol-k8s
	$(MAKE) --no-print-directory build-only

.PHONY: build-only
build-only: ## compile bin/otelcol-k8s from the committed sources, without regenerating
	cd $(DIST_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(BIN) .

# make build-node: the node agent's build (builder-config-node.yaml: only the DaemonSet's
# components; sources generated by ocb into cmd/otelcol-k8s-node and committed), compiled to
# bin/otelcol-k8s-node. The DaemonSet runs it (/otelcol-k8s-node in the image).
.PHONY: build-node
build-node: ## compile bin/otelcol-k8s-node, the node agent's build, from the committed sources
	cd $(NODE_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(NODE_BIN) .

# make run: a simulated node (testbed/nodesim) writes container logs like kubelet and containerd,
# the node agent's build (bin/otelcol-k8s-node, what the DaemonSet runs) runs RUN_CONFIG on them
# and sends to the local CloudWatch Logs server (testbed/localcloudwatch); the report shows what
# arrived. The cluster part (Events, traced Pods) needs bin/kube-local, the full distribution
# bin/otelcol-k8s and bin/runlocal-cluster (testbed/cmd/runlocal/cluster): runlocal runs
# `make build-only kube-bin runlocal-cluster` in the background (about 30 CPU-minutes the first
# time, seconds from Go's build cache later; the last duration is kept in
# bin/kube-local.build-time) and starts that part when they are built, so the node's report
# comes first. What a cold run compiles before that report links no client-go clientset,
# informers or API group beyond core, apps and coordination (internal/repocheck keeps the node
# build so; the cluster part, which needs client-go's recorders, is its own program):
# testbed/BENCHMARKS.md, "Build time". RUN_ARGS passes flags to testbed/cmd/runlocal (for
# example RUN_ARGS='-rate 500 -duration 60s'; RUN_ARGS='-kube-bin=' leaves the cluster part
# out). `make run-samples` is the former quick look: the bundled samples printed by the debug
# exporter. runlocal is built with the collector's flags (CGO_ENABLED=0, -trimpath), and the
# root module requires the versions of cmd/otelcol-k8s-node/go.mod for the modules both use
# (internal/repocheck keeps it so), so that the packages they share (client-go's REST client,
# pdata, grpc, x/net, ...) come from the node build in Go's build cache instead of compiling twice.
RUN_CONFIG ?= config/run.yaml
RUN_ARGS   ?=

.PHONY: run
run: build-node ## simulated node -> bin/otelcol-k8s-node -> local CloudWatch Logs first; Events and traced Pods from bin/kube-local (built meanwhile) after; then what arrived (no AWS, no cluster); Ctrl-C stops
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/runlocal ./testbed/cmd/runlocal
	bin/runlocal -bin $(NODE_BIN) -events-bin $(BIN) -kube-bin $(KUBE_BIN) \
		-cluster-bin bin/runlocal-cluster \
		-cluster-build '$(MAKE) --no-print-directory build-only kube-bin runlocal-cluster' -config $(RUN_CONFIG) $(RUN_ARGS)

.PHONY: runlocal-cluster
runlocal-cluster: ## compile bin/runlocal-cluster, the cluster part of make run (started by runlocal)
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/runlocal-cluster ./testbed/cmd/runlocal/cluster

.PHONY: run-samples
run-samples: build-only ## print the bundled config/samples records with the debug exporter (config/local.yaml)
	$(BIN) --config $(CONFIG)

# make image: the container image without a container daemon (testbed/install/cmd/image,
# go-containerregistry): the static binary for linux/amd64 and linux/arm64 with the NSS CA roots
# on an empty base, uid 10001, OCI labels; an OCI layout in bin/image/oci (`crane push --index
# bin/image/oci <repository>:<tag>`) and bin/image/otelcol-k8s-<arch>.tar for `docker load`.
IMAGE     ?= otelcol-k8s:0.1.0
IMAGE_DIR := $(CURDIR)/bin/image

.PHONY: image
image: ## container image for linux/amd64 and linux/arm64 into bin/image (OCI layout and docker tarballs)
	@set -e; for arch in amd64 arm64; do \
		echo "==> go build linux/$$arch"; \
		(cd $(DIST_DIR) && CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags="-s -w" -o $(CURDIR)/bin/otelcol-k8s-linux-$$arch .); \
		(cd $(NODE_DIR) && CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags="-s -w" -o $(CURDIR)/bin/otelcol-k8s-node-linux-$$arch .); \
	done
	cd testbed/install && SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) $(GO) run ./cmd/image \
		-out $(IMAGE_DIR) -ref $(IMAGE) -revision $$(git rev-parse HEAD 2>/dev/null || echo unknown) \
		-bins amd64=$(CURDIR)/bin/otelcol-k8s-linux-amd64,arm64=$(CURDIR)/bin/otelcol-k8s-linux-arm64 \
		-node-bins amd64=$(CURDIR)/bin/otelcol-k8s-node-linux-amd64,arm64=$(CURDIR)/bin/otelcol-k8s-node-linux-arm64

.PHONY: test-image
test-image: image ## build the image, open it and run its amd64 binary
	cd testbed/install && OTELCOL_K8S_IMAGE=$(IMAGE_DIR)/oci $(GO) test -count=1 -run TestBuiltImage ./image

## ---- tests ----

.PHONY: test
test: check-generated check-versions test-modules ## everything CI runs: generated code, the version set, then every module with -race (the distribution tests included)

# The root module's testbed/distribution tests run the built binary, so it is built first; tests
# that need a Kubernetes API server (testbed/kubecluster) run bin/kube-local, built by kube-bin;
# testbed/install/image opens the image of `make image`.
# The end-to-end scenarios (testbed/e2e) are long and run by `make e2e`, without -race.
.PHONY: test-modules
test-modules: build-only build-node kube-bin localcw-bin journal-tools $(BUILDER) image ## go test -race in every module (e2e scenarios excepted)
	@set -e; for m in $(TEST_MODULES); do \
		echo "==> go test -race $$m"; start=$$(date +%s); \
		(cd $$m && OTELCOL_K8S_BIN=$(BIN) OTELCOL_K8S_NODE_BIN=$(NODE_BIN) OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN) OTELCOL_K8S_LOCALCW_BIN=$(LOCALCW_BIN) \
			OTELCOL_K8S_BUILDER=$(BUILDER) OTELCOL_K8S_IMAGE=$(IMAGE_DIR)/oci $(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/testbed/e2e$$')); \
		echo "<== $$m: $$(( $$(date +%s) - start )) s"; \
	done

# One module's tests, building only what they use: a module whose Go files name kubecluster or
# OTELCOL_K8S_KUBE_BIN gets bin/kube-local (the first build takes about 30 CPU-minutes; later ones
# come from Go's build cache), OTELCOL_K8S_LOCALCW_BIN bin/localcloudwatch, OTELCOL_K8S_BIN and
# OTELCOL_K8S_NODE_BIN the collector builds, OTELCOL_K8S_IMAGE the image, OTELCOL_K8S_BUILDER
# ocb. Anything else runs with nothing built. ARGS go to go test (ARGS='-race -run TestX').
.PHONY: test-one
test-one: ## one module's tests, building only what they need: make test-one C=receiver/crilogreceiver [ARGS='-race -run TestX']
	@if [ -z "$(C)" ] || [ ! -f "$(C)/go.mod" ]; then echo "usage: make test-one C=<module folder> [ARGS=...]  (C holds a go.mod)"; exit 2; fi
	@set -e; uses() { grep -rqsw --include='*.go' -e "$$1" $(C); }; env=""; \
	if uses kubecluster || uses OTELCOL_K8S_KUBE_BIN; then \
		echo "==> $(C) tests against the local API server: make kube-bin"; $(MAKE) --no-print-directory kube-bin; \
		env="$$env OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN)"; fi; \
	if uses OTELCOL_K8S_LOCALCW_BIN; then $(MAKE) --no-print-directory localcw-bin; env="$$env OTELCOL_K8S_LOCALCW_BIN=$(LOCALCW_BIN)"; fi; \
	if uses OTELCOL_K8S_BIN; then $(MAKE) --no-print-directory build-only; env="$$env OTELCOL_K8S_BIN=$(BIN)"; fi; \
	if uses OTELCOL_K8S_NODE_BIN; then $(MAKE) --no-print-directory build-node; env="$$env OTELCOL_K8S_NODE_BIN=$(NODE_BIN)"; fi; \
	if uses OTELCOL_K8S_IMAGE; then $(MAKE) --no-print-directory image; env="$$env OTELCOL_K8S_IMAGE=$(IMAGE_DIR)/oci"; fi; \
	if uses OTELCOL_K8S_BUILDER; then $(MAKE) --no-print-directory $(BUILDER); env="$$env OTELCOL_K8S_BUILDER=$(BUILDER)"; fi; \
	echo "==> go test $(ARGS) $(C) (built for it:$${env:- nothing})"; \
	cd $(C) && env $$env $(GO) test -count=1 $(ARGS) $$($(GO) list ./... | grep -v '/testbed/e2e$$')

# systemd's own journal writer and reader for the journal receiver's differential tests:
# systemd-journal-remote writes real journal files from the export format, journalctl reads them
# back. Installed from the distribution's packages once (apt-get update only when missing);
# without them those tests skip, and fail under CI=true.
JOURNAL_REMOTE := $(firstword $(wildcard /usr/lib/systemd/systemd-journal-remote /lib/systemd/systemd-journal-remote))
.PHONY: journal-tools
journal-tools: ## install systemd-journal-remote and journalctl (Debian packages) for the journal receiver's tests
	@if [ -z "$(JOURNAL_REMOTE)" ] || ! command -v journalctl >/dev/null; then \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && $$SUDO apt-get install -y --no-install-recommends systemd-journal-remote systemd; \
	fi

# bin/localcloudwatch: the local CloudWatch Logs server as a command; the exporter's tests run it
# as a process (its module is not in the exporter's go.mod).
.PHONY: localcw-bin
localcw-bin: ## compile bin/localcloudwatch, the local CloudWatch Logs server
	cd testbed/localcloudwatch && $(GO) build -o $(LOCALCW_BIN) ./cmd/localcloudwatch

# bin/kube-local: etcd and kube-apiserver in one process, compiled from their Go modules
# (k8s.io/kubernetes, go.etcd.io/etcd/server/v3), for tests against a real API server.
.PHONY: kube-bin
kube-bin: ## compile bin/kube-local, the local Kubernetes API server (etcd + kube-apiserver) for tests
	cd testbed/kubecluster/server && CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w $(KUBE_VERSION_LDFLAGS)" -o $(KUBE_BIN) .

# bin/kube-node: the kubelet, kube-scheduler and kube-controller-manager of k8s.io/kubernetes in
# one binary (testbed/kubenode/node; the program is its first argument), built with the API
# server's module recipe and build cache. testbed/kubenode runs it with bin/kube-local and the
# Debian containerd into a one-node cluster on loopback.
.PHONY: kube-node-bin
kube-node-bin: ## compile bin/kube-node: kubelet, kube-scheduler and kube-controller-manager in one binary
	cd testbed/kubenode/node && CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w $(KUBE_VERSION_LDFLAGS)" -o $(KUBE_NODE_BIN) .

# The Debian packages a real node needs; apt runs only when one is missing (apt-get update once).
NODE_PACKAGES := containerd runc containernetworking-plugins

.PHONY: node-deps
node-deps: ## install the Debian packages of the real node (containerd, runc, CNI plugins) when missing; needs root
	@missing=$$(for p in $(NODE_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "==> apt-get install $$missing"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

# make kubenode: a real one-node cluster on loopback (testbed/kubenode) for a person to use: it
# prints the kubeconfig's path and waits for Ctrl-C, then stops the node and restores the host.
.PHONY: kubenode
kubenode: node-deps kube-bin kube-node-bin ## start a real one-node Kubernetes cluster on loopback (root; Ctrl-C stops it and cleans the host)
	cd testbed/kubenode && $(GO) build -o $(CURDIR)/bin/kubenode ./cmd/kubenode
	bin/kubenode -kube-bin $(KUBE_BIN) -node-bin $(KUBE_NODE_BIN) -module-dir testbed/kubenode

# make e2e-node: the tests on the real node (testbed/kubenode; root, containerd): real kubelet
# log rotation, then a host left as it was found; then the product as users install it
# (testbed/install/realnode: the image of `make image` imported, the chart installed by Helm's Go
# library, the scenarios with exact accounting, uninstalled, the host left clean). `make test` skips them. E2E_NODE_ARGS passes
# test flags, e.g. E2E_NODE_ARGS='-run TestRotation'.
E2E_NODE_ARGS ?=
.PHONY: e2e-node
e2e-node: node-deps kube-bin kube-node-bin image journal-tools ## tests on a real one-node cluster: kubelet rotation, then the chart and image installed and the scenarios with exact accounting (root)
	cd testbed/kubenode && OTELCOL_K8S_E2E_NODE=1 OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN) OTELCOL_K8S_KUBE_NODE_BIN=$(KUBE_NODE_BIN) \
		$(GO) test -count=1 -timeout 20m -v ./... $(E2E_NODE_ARGS)
	cd testbed/install && OTELCOL_K8S_E2E_NODE=1 OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN) OTELCOL_K8S_KUBE_NODE_BIN=$(KUBE_NODE_BIN) \
		OTELCOL_K8S_IMAGE_TAR=$(IMAGE_DIR)/otelcol-k8s-$(shell $(GO) env GOARCH).tar \
		$(GO) test -count=1 -timeout 25m -v ./realnode/ $(E2E_NODE_ARGS)

.PHONY: test-dist
test-dist: build-only kube-bin ## the built distribution lists every component and runs the local configuration and the shipped node configuration against the local API server
	cd testbed && OTELCOL_K8S_BIN=$(BIN) OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN) $(GO) test -count=1 ./distribution/...

# make e2e: every end-to-end scenario. First the simulated node (e2e-sim: the distribution
# tests, then testbed/e2e: node simulator -> the built collectors -> local CloudWatch Logs,
# exact line accounting), then the real node (e2e-node, above; root). E2E_ARGS passes test
# flags to the simulated scenarios, e.g. E2E_ARGS='-run TestServerOutage -e2e.outage=15s'.
# E2E_SKIP_DIST=1 leaves out the distribution tests, for a run after `make test`, which ran
# them already with -race (.ci/run).
E2E_ARGS ?=
E2E_SKIP_DIST ?=

.PHONY: e2e
e2e: e2e-sim e2e-node ## every end-to-end scenario: the simulated node, then the real node (root)

.PHONY: e2e-sim
e2e-sim: $(if $(E2E_SKIP_DIST),build-only,test-dist) build-node kube-bin journal-tools ## end-to-end scenarios on the simulated node with exact accounting of every line
	cd testbed && OTELCOL_K8S_BIN=$(BIN) OTELCOL_K8S_NODE_BIN=$(NODE_BIN) OTELCOL_K8S_KUBE_BIN=$(KUBE_BIN) $(GO) test -count=1 -timeout 20m -v ./e2e/... $(E2E_ARGS)

# make bench-e2e: the system benchmark (testbed/cmd/benche2e): one simulated corpus read by
# bin/otelcol-k8s and by the node agent's build (make build-node), both with the DaemonSet's
# shipped configuration and environment, and by the closest upstream pipeline
# (testbed/bench/e2e-upstream: contrib file_log + container operator + klog regex ->
# awscloudwatchlogs v0.139.0), alternating, into one local CloudWatch Logs server.
# BENCH_E2E_ARGS passes flags, e.g. BENCH_E2E_ARGS='-lines 400000 -rounds 5'.
BENCH_E2E_ARGS ?=

.PHONY: bench-e2e
bench-e2e: build-only build-node ## system benchmark against the closest upstream pipeline: events per CPU-second, peak RSS (RssAnon, RssFile), PutLogEvents calls per MiB
	cd testbed/bench/e2e-upstream && GONOSUMDB=github.com/open-telemetry/opentelemetry-collector-contrib \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(CURDIR)/bin/otelcol-upstream .
	$(GO) build -o bin/benche2e ./testbed/cmd/benche2e
	bin/benche2e -bin $(BIN) -node-bin bin/otelcol-k8s-node -upstream-bin bin/otelcol-upstream $(BENCH_E2E_ARGS)

# make bench-fluentbit: the node agent (make build-node, the DaemonSet's shipped configuration)
# side by side with Fluent Bit 4.2.8 (tail + cri parser -> cloudwatch_logs over plain HTTP, the
# binary in FLUENTBIT_BIN) on a CRI corpus, alternating, into one local CloudWatch Logs server.
# BENCH_FLUENTBIT_ARGS passes flags, e.g. '-cri-records 1000000 -rounds 2'.
FLUENTBIT_BIN ?= ../shared/bench/fluent-bit/fluent-bit
BENCH_FLUENTBIT_ARGS ?= -cri-records 200000 -rounds 2

.PHONY: bench-fluentbit
bench-fluentbit: build-node ## the node agent against Fluent Bit on a CRI corpus: events per CPU-second, peak RSS (RssAnon, RssFile)
	$(GO) build -o bin/benche2e ./testbed/cmd/benche2e
	bin/benche2e -node-bin bin/otelcol-k8s-node -fluentbit-bin $(FLUENTBIT_BIN) -cri-files 200 $(BENCH_FLUENTBIT_ARGS)

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME (default 10s)
	@set -e; for m in $(TEST_MODULES); do \
		(cd $$m && for pkg in $$($(GO) list ./...); do \
			for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
				echo "==> fuzz $$pkg $$f"; \
				$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
			done; done); \
	done

.PHONY: bench
bench: ## Go benchmarks of every module, then the side-by-side benchmark scripts in testbed/bench
	@set -e; for m in $(TEST_MODULES); do \
		echo "==> bench $$m"; (cd $$m && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...); \
	done
	@set -e; for s in testbed/bench/*.sh; do [ -e "$$s" ] || continue; echo "==> $$s"; bash $$s; done

## ---- code quality ----

# Left out: testbed/kubecluster/server (a single main that starts etcd and kube-apiserver; linting
# it means type-checking all of k8s.io/kubernetes) and the two upstream baselines of the
# benchmarks (a few dozen lines each over contrib components, which dominate the time).
LINT_SKIP := ./internal/tools ./$(DIST_DIR) ./$(NODE_DIR) ./testbed/kubecluster/server ./testbed/kubenode/node \
	./testbed/bench/e2e-upstream ./testbed/bench/cloudwatch-upstream ./testbed/bench/k8sevents-upstream

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint in every module (the local API server and the upstream baselines excepted)
	@set -e; for m in $(filter-out $(LINT_SKIP),$(ALL_MODULES)); do \
		echo "==> lint $$m"; start=$$(date +%s); (cd $$m && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...); \
		echo "<== $$m: $$(( $$(date +%s) - start )) s"; \
	done

.PHONY: fmt
fmt: $(GOFUMPT) $(GOIMPORTS) ## format every Go file with gofumpt and goimports
	find . -name '*.go' -not -path './.tools/*' -not -path './$(DIST_DIR)/*' -not -path './$(NODE_DIR)/*' -print0 | \
		xargs -0 $(GOIMPORTS) -w -local github.com/otelcol-k8s/otelcol-k8s
	find . -name '*.go' -not -path './.tools/*' -not -path './$(DIST_DIR)/*' -not -path './$(NODE_DIR)/*' -print0 | xargs -0 $(GOFUMPT) -w

.PHONY: tidy
tidy: ## go mod tidy -e in every module
	@set -e; for m in $(ALL_MODULES); do echo "==> tidy $$m"; (cd $$m && $(GO) mod tidy -e); done

.PHONY: clean
clean: ## remove build output and installed tools
	rm -rf bin .tools
