# Slipway build, test and development targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
export GOSUMDB ?= off
export GOTOOLCHAIN ?= local

SLIPWAY_CACHE ?= $(HOME)/.cache/slipway
export SLIPWAY_CACHE
TOOLS := $(SLIPWAY_CACHE)/tools/$(shell $(GO) env GOVERSION)

CONTROLLER_GEN_VERSION := v0.19.0
STATICCHECK_VERSION := v0.6.1
KUBE_VERSION ?= v1.36.3

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/slipway-dev/slipway/pkg/version.Version=$(VERSION)

.PHONY: help
help: ## list targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-22s %s\n", $$1, $$2}'

.PHONY: build
build: ## build slipway and machine-controller into bin/
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# slipway's images (build/image, pkg/images): the machine-controller tagged $(VERSION), and the
# OpenStack cloud-controller-manager (test/ccm/build.sh's binary) under upstream's name. FROM
# scratch and reproducible (SOURCE_DATE_EPOCH sets their time; default the epoch).
.PHONY: image
image: ## build the machine-controller and cloud-controller-manager images into _out/images (OCI layout + archive for docker load / ctr import)
	$(GO) run ./build/image -version $(VERSION) -out _out/images

$(TOOLS)/controller-gen:
	GOBIN=$(TOOLS) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: generate
generate: $(TOOLS)/controller-gen ## regenerate deepcopy code and CRDs
	$(TOOLS)/controller-gen object paths=./pkg/apis/...
	$(TOOLS)/controller-gen crd:generateEmbeddedObjectMeta=true paths=./pkg/apis/cluster/... output:crd:dir=manifests/crds

# Rewrite the golden files from what the code renders now: every package whose tests import
# test/golden, with SLIPWAY_UPDATE_GOLDEN=1, which reaches them all (a plain `go test ./...
# -update` fails in the packages that do not know the flag). Under -short, so that no Docker
# sandbox host starts; pkg/terraform's captures come from the real terraform, in a run of their own.
.PHONY: golden
golden: ## rewrite every golden file (the packages that import test/golden; pkg/terraform's captures with the real terraform)
	pkgs=$$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | \
	  awk '/ github.com\/slipway-dev\/slipway\/test\/golden( |$$)/ {print $$1}') && test -n "$$pkgs" && \
	SLIPWAY_UPDATE_GOLDEN=1 $(GO) test -count=1 -short $$pkgs
	SLIPWAY_UPDATE_GOLDEN=1 $(GO) test -count=1 -run '^TestCaptures$$' ./pkg/terraform

.PHONY: lint
lint: $(TOOLS)/staticcheck ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l cmd pkg test); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags bench,conformance ./test/e2e
	$(TOOLS)/staticcheck ./...

.PHONY: tidy-check
tidy-check: ## fail when go.mod or go.sum (slipway's, build/ccm's, test/s3/versitygw's) is not what `go mod tidy` makes of them
	$(GO) mod tidy -diff
	cd build/ccm && $(GO) mod tidy -diff
	cd test/s3/versitygw && $(GO) mod tidy -diff

.PHONY: test-unit
test-unit: ## unit tests only (no sshd, terraform, apiserver or Docker)
	$(GO) test -short ./...

# A contributor's quick loop: every unit test and the integration tests that need no Docker (real
# sshd, kube-apiserver + etcd, the OpenStack simulator, the CCM, versitygw), without the race
# detector. Left out, and said so at the end: the e2e suites and every other test on Docker
# sandbox hosts (QUICK_DOCKER_PKGS, QUICK_DOCKER_TESTS), terraform against the simulator's hosts,
# and the two slowest packages (QUICK_SLOW_PKGS): pkg/encryption's three API servers, each waiting
# a minute for a configuration reload, and the controller's long scenarios against the simulator
# in pkg/cloud/openstack/integration (4.5 minutes alone); and -race. Needs the ci-* set-up once,
# as make test does.
QUICK_DOCKER_PKGS := /test/e2e /test/sandbox /test/openstack-sim/hosts /test/terraform /test/bench
QUICK_DOCKER_TESTS := TestScriptsOnSandboxHost|TestImportImagesOnSandboxHost|TestLockOnASandboxHost
QUICK_SLOW_PKGS := /pkg/encryption /pkg/cloud/openstack/integration
.PHONY: test-quick
test-quick: ## unit tests and the integration tests that need no Docker, without -race (a few minutes warm); says what it left out
	set -o pipefail; \
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver kubectl) \
	PATH="$(TOOLS):$$PATH" \
	$(GO) test -json -count=1 -parallel 3 -timeout 15m -skip '^($(QUICK_DOCKER_TESTS))$$' \
	  $$($(GO) list ./... | grep -v $(foreach p,$(QUICK_DOCKER_PKGS) $(QUICK_SLOW_PKGS),-e '$(p)\(/\|$$\)')) | $(GO) run ./test/noskip; rc=$$?; \
	echo "test-quick left out: the e2e suites and the other tests on Docker sandbox hosts ($(QUICK_DOCKER_PKGS); $(QUICK_DOCKER_TESTS)), the slow $(QUICK_SLOW_PKGS) (minutes each: configuration reloads, the controller's long scenarios), and the race detector: make test runs them all"; \
	exit $$rc

# Packages whose unit and integration tests run under the race detector: the apply engine
# (cluster, probe, plan, phases and what they share), the SSH layer against real sshd, the
# renderers and the manifest and Terraform loaders. The machine-controller's packages
# (controller, webhook, cloud: long envtest scenarios against the OpenStack simulator) and the
# e2e suites run without it, in test-integration and test-e2e.
RACE_PKGS := ./pkg/access/... ./pkg/addons/... ./pkg/apiproxy/... ./pkg/apis/... ./pkg/applied/... ./pkg/bootstrap/... \
	./pkg/cli/... ./pkg/cluster/... ./pkg/config/... ./pkg/csr/... ./pkg/etcd/... ./pkg/internal/... \
	./pkg/inventory/... ./pkg/kube/... ./pkg/kubeadm/... ./pkg/mcdeploy/... ./pkg/mirror/... ./pkg/phases/... \
	./pkg/plan/... ./pkg/probe/... ./pkg/progress/... ./pkg/scripts/... ./pkg/ssh/... ./pkg/strict/... \
	./pkg/terraform/... ./pkg/version/... ./pkg/workers/... ./pkg/yamlfmt/...

# The README's test command. It runs everything: unit tests, integration tests against real
# sshd, terraform and kube-apiserver+etcd (the packages in RACE_PKGS under -race), and the
# end-to-end suites on Docker sandbox hosts. Run `make ci-deps ci-docker ci-terraform ci-terraform-openstack ci-kube
# ci-ccm ci-s3` once first (what .ci/run does).
# test-race and test-integration print what plain `go test` would, then every skipped test with its
# reason (test/noskip); under CI=true a skip fails the run, as a component every test needs is installed.
NOSKIP := $(if $(filter true,$(CI)),-fail,)
# Each part runs even when one before it failed, so that one run says everything that fails, and
# ends with a "==> phase" line with its exit status and time, from which .ci/run's digest compares
# each part with its budget (.ci/budget).
TEST_PHASES := test-race test-integration test-e2e-probed test-e2e-side
.PHONY: test test-race test-integration test-e2e
test: ## all tests: unit, integration and e2e (needs the ci-* set-up targets once); each part timed
	@rc=0; for p in $(TEST_PHASES); do \
	  s=$$(date +%s); $(MAKE) --no-print-directory $$p; r=$$?; [ $$r = 0 ] || rc=1; \
	  echo "==> phase $$p: exit $$r after $$(( $$(date +%s) - s ))s"; \
	done; exit $$rc

test-race: ## unit and integration tests of RACE_PKGS under the race detector
	set -o pipefail; \
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver kubectl) \
	PATH="$(TOOLS):$$PATH" \
	$(GO) test -json -race -count=1 -timeout 30m $(RACE_PKGS) | $(GO) run ./test/noskip $(NOSKIP)

# -parallel 3: pkg/encryption's three tests each wait on an API server of their own that reloads its
# encryption configuration once a minute; they use little CPU, and run together they take 3
# minutes rather than 7.
test-integration: ## unit and integration tests of the packages test-race does not run (no e2e)
	set -o pipefail; \
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver kubectl) \
	PATH="$(TOOLS):$$PATH" \
	$(GO) test -json -count=1 -parallel 3 -timeout 45m $$($(GO) list ./... | grep -v /test/e2e | grep -vxF -f <($(GO) list $(RACE_PKGS))) | $(GO) run ./test/noskip $(NOSKIP)

# The e2e tests, in two phases of two suites side by side, each suite its own go test process on a
# sandbox and network of its own, its lines prefixed with the test's name:
#   test-e2e-probed: TestLifecycle beside TestPools, the two suites that probe a workload through
#     upgrades, rollouts and renewals and fail on any failed request. Once every API server
#     reached every etcd member (so that a control plane's etcd restart no longer stalled its
#     API server), they ran side by side with 0 failed requests: 2,221 s together on 2026-12-02
#     with the CPU 99 % busy, against 2,700-3,700 s one after the other before.
#   test-e2e-side: TestQuickStart beside TestAdopt and the package's other tests (no prober);
#     880 s together on 2026-12-02.
# The conformance subset runs inside TestPools. Each run's output goes through test/noskip
# -stream: as go test -v prints it, then the end of every failed test's own output again, so that
# the tail of a CI log says what failed.
E2E_PROBED := TestLifecycle|TestPools
E2E_GO_TEST := $(GO) test -json -count=1 -v
E2E_OUT := $(GO) run ./test/noskip -stream $(NOSKIP)
test-e2e: ## end-to-end on sandbox hosts: test-e2e-probed (TestLifecycle beside TestPools with the conformance subset), then test-e2e-side (TestQuickStart beside TestAdopt)
	$(MAKE) --no-print-directory test-e2e-probed; probed=$$?; \
	$(MAKE) --no-print-directory test-e2e-side; side=$$?; \
	if [ $$probed != 0 ] || [ $$side != 0 ]; then echo "test-e2e failed: test-e2e-probed exit $$probed, test-e2e-side exit $$side" >&2; exit 1; fi

.PHONY: test-e2e-probed test-e2e-side
test-e2e-probed: ## end-to-end: TestLifecycle beside TestPools (with the conformance subset), each line prefixed with its test's name
	( set -o pipefail; $(E2E_GO_TEST) -timeout 80m -run '^TestLifecycle$$' ./test/e2e | $(E2E_OUT) | sed -u 's/^/[TestLifecycle] /' ) & life=$$!; \
	( set -o pipefail; $(E2E_GO_TEST) -timeout 80m -run '^TestPools$$' ./test/e2e | $(E2E_OUT) | sed -u 's/^/[TestPools] /' ); pools=$$?; \
	wait $$life; liferc=$$?; \
	if [ $$liferc != 0 ] || [ $$pools != 0 ]; then echo "test-e2e-probed failed: TestLifecycle exit $$liferc, TestPools exit $$pools" >&2; exit 1; fi

test-e2e-side: ## end-to-end: TestQuickStart beside TestAdopt and the package's other tests, each line prefixed with its test's name
	( set -o pipefail; $(E2E_GO_TEST) -timeout 45m -run '^TestQuickStart$$' ./test/e2e | $(E2E_OUT) | sed -u 's/^/[TestQuickStart] /' ) & quick=$$!; \
	( set -o pipefail; $(E2E_GO_TEST) -timeout 45m -skip '^(TestQuickStart|$(E2E_PROBED))$$' ./test/e2e | $(E2E_OUT) | sed -u 's/^/[TestAdopt] /' ); rest=$$?; \
	wait $$quick; quickrc=$$?; \
	if [ $$quickrc != 0 ] || [ $$rest != 0 ]; then echo "test-e2e-side failed: TestQuickStart exit $$quickrc, TestAdopt and the rest exit $$rest" >&2; exit 1; fi

.PHONY: test-e2e-pools
test-e2e-pools: ## end-to-end: an OpenStack worker pool whose machines boot as hosts and join, under 3 control planes behind the load balancer, and the conformance subset on them (TestPools alone; needs make conformance-build)
	$(GO) test -count=1 -timeout 45m -v -run TestPools ./test/e2e

.PHONY: test-e2e-pools-1cp
test-e2e-pools-1cp: ## end-to-end: TestPools with one control plane, quicker for a local run (CI runs it HA)
	SLIPWAY_E2E_POOLS_HA=0 $(GO) test -count=1 -timeout 30m -v -run TestPools ./test/e2e

.PHONY: test-e2e-adopt
test-e2e-adopt: ## end-to-end: a cluster installed KubeOne-style without slipway, its KubeOne manifest migrated, adopted by apply (nothing restarted), upgraded, then encryption at rest enabled and its key rotated (TestAdopt alone)
	$(GO) test -count=1 -timeout 30m -v -run 'TestAdopt$$' ./test/e2e

.PHONY: test-e2e-quickstart
test-e2e-quickstart: ## end-to-end: the OpenStack quick start, terraform apply → slipway apply -t → pool → reset → terraform destroy (TestQuickStart alone)
	$(GO) test -count=1 -timeout 45m -v -run 'TestQuickStart$$' ./test/e2e

.PHONY: bench-pools
bench-pools: ## worker pools on this machine: apply with and without a pool, 0→3, a rolling update of 3, and the same join by hand (about 20 minutes); figures in test/bench/pools.md
	CI=true $(GO) test -tags bench -count=1 -v -timeout 60m -run TestBenchPools ./test/e2e

E2E_NEXT ?= v1.36.3,v1.37.2
.PHONY: test-e2e-next
test-e2e-next: ## every e2e scenario one minor later (v1.37 installs, v1.36 → v1.37 upgrade); not in CI, it builds one more Kubernetes
	SLIPWAY_E2E_VERSIONS=$(E2E_NEXT) $(GO) test -count=1 -timeout 75m -v ./test/e2e

# --- CI set-up: idempotent, cached under $(SLIPWAY_CACHE) ----------------------------------------

CI_APT_PACKAGES := openssh-server openssh-client sudo iproute2 iptables ca-certificates curl git openssl util-linux debootstrap gnupg python3-openstackclient

.PHONY: ci-deps
ci-deps: ## install the Debian packages the tests need
	@missing=""; for p in $(CI_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

.PHONY: ci-docker
ci-docker: ## make sure a Docker engine is running (install docker.io and start dockerd if not)
	@if ! docker info >/dev/null 2>&1; then \
	  command -v dockerd >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io; }; \
	  (dockerd >/var/log/dockerd.log 2>&1 &); \
	  for i in $$(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; \
	  docker info >/dev/null; \
	fi

TERRAFORM_VERSION := v1.5.7
.PHONY: ci-terraform
ci-terraform: ## install terraform from the Go module proxy when it is missing (cached)
	@if ! command -v terraform >/dev/null; then \
	  [ -x $(TOOLS)/terraform ] || GOBIN=$(TOOLS) $(GO) install github.com/hashicorp/terraform@$(TERRAFORM_VERSION); \
	  ln -sf $(TOOLS)/terraform /usr/local/bin/terraform; \
	fi; terraform version | head -1

.PHONY: ci-terraform-openstack
ci-terraform-openstack: ## build terraform-provider-openstack for test/terraform from the Go module proxy (cached; cold about 2 minutes)
	test/terraform/provider.sh

.PHONY: ci-kube
ci-kube: ## build kube-apiserver, etcd and kubectl for envtest (cached)
	test/kube/build.sh $(KUBE_VERSION) kube-apiserver kubectl

.PHONY: ci-s3
ci-s3: ## build versitygw, the S3-compatible server the tests of etcd.snapshots.s3 upload to, from test/s3/versitygw's go.mod and go.sum (cached; cold a few minutes)
	test/s3/build.sh

.PHONY: ci-ccm test-ccm
ci-ccm: ## build the OpenStack cloud-controller-manager from build/ccm's go.mod and go.sum, its modules from the Go module proxy (cached)
	test/ccm/build.sh

test-ccm: ## the OpenStack cloud-controller-manager against the simulator and a real kube-apiserver (about 10 s warm)
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver) \
	$(GO) test -count=1 -v ./test/ccm/...

# ---- conformance: the Kubernetes conformance suite (test/conformance, see its README) --------
.PHONY: conformance-build
conformance-build: ## build e2e.test, ginkgo and agnhost for KUBE_VERSION from the Go module proxy (cached; cold about 20 minutes on 2 busy cores), and the test images
	test/conformance/build.sh $(KUBE_VERSION)

# TestConformance (built with -tags conformance) on a cluster of its own. FULL=1 runs every
# [Conformance] spec (hours); the default is CI's subset (test/conformance/subset.txt, which
# test-e2e runs on TestPools' cluster). CONFORMANCE_PROCS sets ginkgo's parallelism
# (default 4). SPECS=FILE runs the specs FILE lists instead of the subset (same format, a path
# from the repository's root), e.g. test/conformance/rerun.txt. Reports: test/conformance/results.
FULL ?=
SPECS ?=
CONFORMANCE_PROCS ?=
.PHONY: conformance
conformance: conformance-build ## the conformance suite on a fresh sandbox HA cluster (3 control planes, 2 workers): CI's subset, the specs of SPECS=FILE, or every [Conformance] spec with FULL=1
	SLIPWAY_CONFORMANCE_FULL=$(FULL) SLIPWAY_CONFORMANCE_SPECS=$(SPECS) SLIPWAY_CONFORMANCE_PROCS=$(CONFORMANCE_PROCS) \
	$(GO) test -tags conformance -count=1 -timeout 4h -v -run 'TestConformance$$' ./test/e2e

# ---- sandbox: real hosts as Docker containers (test/sandbox, see its README) ----------------
SANDBOX_FLAGS ?= --hosts 4 --lb

.PHONY: sandbox-up sandbox-down sandbox-status sandbox-selftest
sandbox-up: ## start sandbox hosts (flags in SANDBOX_FLAGS); builds and caches artifacts on first use
	$(GO) run ./test/sandbox up $(SANDBOX_FLAGS)

sandbox-down: ## remove the sandbox's containers, volumes and network
	$(GO) run ./test/sandbox down

sandbox-status: ## list sandbox hosts and asset URLs
	$(GO) run ./test/sandbox status

sandbox-selftest: ## raw kubeadm on 2 extra sandbox hosts; prints Ready nodes and timings
	$(GO) run ./test/sandbox selftest

# ---- pkg/ssh (issue 3): SSH transport against real OpenSSH sshd ------------------------------
# Needs root and the ci-deps packages (openssh-server, openssh-client, sudo, iproute2).
.PHONY: test-ssh bench-ssh
test-ssh: ## pkg/ssh tests against real sshd processes (about 1 minute)
	$(GO) test -count=1 ./pkg/ssh/...

bench-ssh: ## pkg/ssh benchmarks plus an OpenSSH client baseline; figures in test/bench/ssh.md
	bash test/bench/ssh.sh 3
	bash test/bench/ssh-openssh-baseline.sh

# ---- machine-controller (issue 6): pkg/controller, pkg/webhook, pkg/bootstrap ----------------
.PHONY: generate-machine-controller test-machine-controller bench-controller
generate-machine-controller: $(TOOLS)/controller-gen ## regenerate the machine-controller's RBAC from its kubebuilder markers
	$(TOOLS)/controller-gen rbac:roleName=machine-controller paths=./pkg/controller/... output:rbac:dir=manifests/machine-controller

test-machine-controller: ## machine-controller tests against a real kube-apiserver and etcd (about 2 minutes warm)
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver) \
	$(GO) test -count=1 ./pkg/controller/... ./pkg/webhook/... ./pkg/bootstrap/... ./pkg/cloud/cloudtest/... \
	  ./pkg/apis/cluster/... ./cmd/machine-controller/... ./test/envtest/...

bench-controller: ## scale 0→500→0 and hold 5,000 machines; figures go to test/bench/controller.md
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver) \
	$(GO) test ./test/bench/controller -run '^$$' -bench . -benchtime 1x -timeout 60m

# ---- OpenStack provider and simulator (issue 7): pkg/cloud/openstack, test/openstack-sim -----
OPENSTACK_SIM_LISTEN ?= 127.0.0.1:8774
.PHONY: test-openstack bench-openstack bench-cloudboot openstack-sim
test-openstack: ## OpenStack provider and simulator tests (with the real openstack CLI against it), and the controller scenarios on them against a real kube-apiserver (about 7 minutes warm)
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver) \
	$(GO) test -count=1 -timeout 30m ./pkg/cloud/openstack/... ./test/openstack-sim/... ./test/bench/openstack/...

bench-openstack: ## OpenStack calls per machine at 0→500: the provider alone, then through the controllers; figures in test/bench/openstack.md
	for v in network subnet fip bfv; do $(GO) run ./test/bench/openstack -machines 500 -latency 20ms -variant $$v; done
	KUBEBUILDER_ASSETS=$$(test/kube/build.sh $(KUBE_VERSION) kube-apiserver) \
	$(GO) test ./pkg/cloud/openstack/integration -run '^$$' -bench Scale500 -benchtime 1x -timeout 30m

bench-cloudboot: ci-deps ci-docker ## OpenStack in a box: server create to SSH and to cloud-init done (1 and 5 at once), API latency; figures in test/bench/cloudboot.md
	$(GO) run ./test/bench/cloudboot -servers 1,5 -rounds 3

openstack-sim: ## run the OpenStack simulator standalone on OPENSTACK_SIM_LISTEN (prints OS_* variables)
	$(GO) run ./test/openstack-sim --listen $(OPENSTACK_SIM_LISTEN)

.PHONY: openstack-up openstack-down
openstack-up: ci-deps ci-docker ## OpenStack in a box: the simulator in the background, its servers booting as sandbox hosts; prints OS_* and writes clouds.yaml
	GO=$(GO) test/openstack-sim/up.sh up

openstack-down: ## stop the simulator started by openstack-up and remove its hosts, networks and NAT rules
	GO=$(GO) test/openstack-sim/up.sh down

# ---- apply benchmark (issue 5) -------------------------------------------------------------
.PHONY: bench-apply
bench-apply: ## slipway apply against raw kubeadm on the same sandbox hosts: install, no-op, upgrade; figures in test/bench/apply.md
	$(GO) run ./test/bench/apply

# ---- demo: the README's main command ----------------------------------------------------------
# test/sandbox/demo.sh: sandbox hosts (3 control planes and a load balancer), the OpenStack
# simulator whose servers boot as hosts on the sandbox's network, slipway apply of an HA cluster
# with a worker pool of 2 machines, then kubectl get nodes and the pool's objects. State in DEMO_DIR
# (the simulator's in DEMO_DIR/openstack). Only KUBE_VERSION is built.
DEMO_DIR ?= test/sandbox/.state
.PHONY: demo demo-down
demo: ci-deps ci-docker build ## sandbox hosts and the OpenStack simulator up, then slipway apply an HA cluster with a worker pool, then kubectl get nodes,machines
	GO=$(GO) KUBE_VERSION=$(KUBE_VERSION) test/sandbox/demo.sh up $(DEMO_DIR)

demo-down: ## reset the demo cluster (the pool's servers go first), then stop the simulator and remove the sandbox hosts
	GO=$(GO) test/sandbox/demo.sh down $(DEMO_DIR)

# test/terraform/demo.sh: terraform/openstack's quick start against the OpenStack simulator, as its
# README tells a user: terraform apply, slipway apply -t through the bastion, the pool Ready; down:
# slipway reset, terraform destroy. Each prints its phases' times. State in DEMO_OPENSTACK_DIR.
DEMO_OPENSTACK_DIR ?= test/terraform/.demo
.PHONY: demo-openstack demo-openstack-down bench-quickstart
demo-openstack: ci-deps ci-docker ci-terraform build ## the OpenStack quick start: terraform apply of terraform/openstack against the simulator, slipway apply -t, the pool's workers Ready
	GO=$(GO) KUBE_VERSION=$(KUBE_VERSION) test/terraform/demo.sh up $(DEMO_OPENSTACK_DIR)

demo-openstack-down: ## slipway reset and terraform destroy of demo-openstack, then stop the simulator and remove the sandbox
	GO=$(GO) test/terraform/demo.sh down $(DEMO_OPENSTACK_DIR)

bench-quickstart: ci-deps ci-docker ci-terraform build ## the OpenStack quick start's time by phase (RUNS=1 demo-openstack up and down); figures in test/bench/quickstart.md
	GO=$(GO) KUBE_VERSION=$(KUBE_VERSION) test/bench/quickstart.sh
