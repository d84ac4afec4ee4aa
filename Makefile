# Blocks and Fuel in Go. The two commands a newcomer needs:
#   make demo   trains the demo experiment on the MNIST subset shipped in the binary
#   make test   runs the test suite
# Both install what they need (Debian packages, Go modules) when it is missing.

GO      ?= go
BIN     := bin/blocks-repl
SHARED  ?= $(abspath ../shared)

# Debian packages: build (OpenBLAS, HDF5, ZeroMQ, Open MPI) and test references (numpy, h5py).
BUILD_PKGS := libopenblas-dev libhdf5-dev pkg-config libzmq3-dev libopenmpi-dev openmpi-bin
TEST_PKGS  := python3-numpy python3-h5py python3-zmq python3-pil python3-jupyter-client python3-nbclient jupyter-console

.PHONY: test-purego build-purego build-cuda gpu-check all build demo test accept bench fuzz fuzz-short soak deps test-deps vet fmt clean bench-server accept-checkpoint bench-fuel test-browser bench-distributed test-jupyter

all: build

# Installs the missing Debian packages (needs root or sudo, as on CI).
deps:
	@missing=""; for p in $(BUILD_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages (apt-get, a minute or two):$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@GOPROXY=off GOFLAGS=-mod=mod $(GO) mod download >/dev/null 2>&1 || { \
	  echo "downloading Go modules (first run: a minute or so)"; $(GO) mod download; }

test-deps: deps
	@missing=""; for p in $(TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages (apt-get, a minute or two):$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	@[ -x $(BIN) ] || echo "building blocks-repl (first build: compiling the cgo bindings of OpenBLAS, HDF5, ZeroMQ and MPI, a few minutes)"
	$(GO) build -o $(BIN) ./cmd/blocks-repl

# The main job on the embedded default: scripts/demo.star trains an MLP on
# the MNIST subset compiled into the binary (no download) and prints the
# test error.
demo: build
	./$(BIN) run scripts/demo.star

vet:
	@echo "go vet ./... (the first run compiles every package: several minutes)"
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# make test needs nothing outside the repository: its fixtures are in
# internal/fixtures and testdata/ or written at test time (MNIST-shaped
# files from the subset shipped in the binary), so it runs without
# ../shared, BLOCKS_SHARED or FUEL_DATA_PATH (unset here; .ci/run checks it
# with SHARED=/nonexistent). The runs on the real full data are make
# accept's.
# The timeout is a hang detector, not a speed check: cmd/blocks-repl's
# tests take ~3 minutes on an idle 2-core machine and ran past 20 at a
# load average of 31 (no test stuck: the one running had started 6 s
# before the alarm).
TEST_ENV := env -u BLOCKS_SHARED -u FUEL_DATA_PATH -u BLOCKS_ACCEPT -u BLOCKS_SOAK
TEST_TIMEOUT ?= 60m
test: test-deps vet
	@echo "running the test suite (go test ./...: compiles every test binary, then runs them; tens of minutes on 2 cores)"
	$(TEST_ENV) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	@echo "script classes called from MultiProcessing's goroutine, under the race detector (docs/extending.md)"
	$(TEST_ENV) $(GO) test -race -count=1 -run 'TestScripts/classes_goroutines' ./starlib

# The pure-Go build (CGO_ENABLED=0: gonum's Go BLAS; HDF5 and ZeroMQ
# refused with a message naming the build) and its own tests: every
# package that needs neither, and TestBuildsAgree, which checks a trained
# MLP against the cgo build's golden file within float tolerance
# (docs/backends.md), and scripts/purego_compare.sh, which trains the demo
# with both binaries and compares every printed cost (1e-5). Two tests are the cgo build's only: a training step
# allocates nothing (gonum's parallel products allocate) and the count of
# NaN elements after a NaN cost (gonum's products skip zero factors, so a
# NaN meets fewer elements); and the fused recurrent sequences equal to
# their scan bit for bit (the scan's products are OpenBLAS's there, gonum's
# here, which sum in another order).
PUREGO_PKGS := ./bricks/... ./core ./core/device ./core/exec/... ./core/graph ./train/... ./cmd/dashboard ./docs ./fuel ./fuel/config \
  ./fuel/datasets/toy ./fuel/download ./fuel/h5 ./fuel/schemes ./fuel/streams ./fuel/transformers ./internal/... \
  ./nd ./numpyrand ./stdlib
PUREGO_CGO_ONLY := TestProcessBatchDoesNotAllocate|TestNaNCostStopsTraining|TestFusedRNNMatchesScan
build-purego:
	CGO_ENABLED=0 $(GO) build -o bin/blocks-repl-purego ./cmd/blocks-repl
test-purego: build-purego build
	CGO_ENABLED=0 $(GO) vet ./...
	./scripts/purego_compare.sh $(BIN) bin/blocks-repl-purego
	$(TEST_ENV) CGO_ENABLED=0 $(GO) test -count=1 -timeout 20m -skip '$(PUREGO_CGO_ONLY)' $(PUREGO_PKGS)
	$(TEST_ENV) CGO_ENABLED=0 $(GO) test -count=1 -run 'PureGo' ./fuel/server

# The CUDA build (docs/backends.md): Debian's CUDA toolkit (the non-free
# component is enabled when missing; a large install, once per machine)
# compiles the kernels to PTX, embedded in bin/blocks-repl-cuda, which
# runs with --device cuda on a machine with an NVIDIA driver and GPU.
CUDA_PTX  := core/exec/cuda/kernels/kernels.ptx
NVCC_ARCH ?= compute_60
$(CUDA_PTX): core/exec/cuda/kernels/kernels.cu
	./scripts/cuda_toolkit.sh
	nvcc -ptx -arch=$(NVCC_ARCH) -O3 -fmad=false $< -o $@
build-cuda: deps $(CUDA_PTX)
	./scripts/cuda_toolkit.sh
	$(GO) vet -tags cuda ./core/exec/cuda ./cmd/blocks-repl
	$(GO) build -tags cuda -o bin/blocks-repl-cuda ./cmd/blocks-repl
	$(GO) test -c -tags cuda -o bin/cuda.test ./core/exec/cuda

# The checks only a GPU can make (under 5 minutes there): built and packed
# here into gpu-check.tar.gz (binaries, their shared libraries, MNIST and
# the PyTorch baselines), then run by scripts/gpu_check_run.sh, here when
# this machine has an NVIDIA GPU, else on the GPU machine (README).
gpu-check: build-cuda
	BLOCKS_SHARED=$(SHARED) ./scripts/gpu_check_prepare.sh
	@if [ -e /dev/nvidia0 ]; then sh scripts/gpu_check_run.sh; else echo "no GPU here: copy this checkout with gpu-check.tar.gz to a GPU machine and run sh scripts/gpu_check_run.sh there"; fi

# The dashboard in headless Chromium while a real run trains (Debian's
# chromium and chromium-driver, installed when missing); .ci/run calls it.
# BLOCKS_DASHBOARD_SCREENSHOT=docs/dashboard.png also saves a screenshot.
BROWSER_PKGS := chromium chromium-driver
test-browser: deps
	@missing=""; for p in $(BROWSER_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages (apt-get, a minute or two):$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(TEST_ENV) BLOCKS_BROWSER=1 $(GO) test -count=1 -timeout 5m -run '^TestBrowser' -v ./cmd/blocks-repl/

# The Jupyter kernel (docs/jupyter.md) driven by Debian's jupyter_client and
# nbclient (in TEST_PKGS, so make test runs these too): a notebook executed
# headless, an interrupt during training, completion, inspection and wrong
# signatures (cmd/blocks-repl/kernel_test.go).
test-jupyter: test-deps
	$(TEST_ENV) BLOCKS_JUPYTER=1 $(GO) test -count=1 -timeout 10m -run '^TestJupyter' -v ./cmd/blocks-repl/

# Long acceptance runs (kept out of make test).
# Every TestAccept... of the project (training to published accuracies on
# the real, full MNIST, many kill-and-resume trials): long, so kept out of
# make test. They need the shared data directory (../shared beside the
# checkout, or SHARED=dir: data/mnist/ with MNIST's four .gz files); so do
# make bench, bench-fuel, bench-distributed, soak and gpu-check.
accept: test-deps build
	@[ -d "$(SHARED)/data/mnist" ] || { echo "make accept needs the shared data: $(SHARED)/data/mnist is missing (SHARED=dir)"; exit 1; }
	BLOCKS_SHARED=$(SHARED) BLOCKS_ACCEPT=1 $(GO) test -count=1 -timeout 120m -run '^TestAccept' -v ./...

# The tutorial model, one epoch on full MNIST, beside PyTorch on the same
# model in the same command; prints both and the ratio.
bench: test-deps build
	@BLOCKS_SHARED=$(SHARED) ./scripts/bench.sh

# Trains the tutorial model for SOAK_EPOCHS epochs while sampling the heap,
# goroutines and open files; fails if any grows without bound.
SOAK_EPOCHS ?= 20
soak: test-deps
	BLOCKS_SHARED=$(SHARED) BLOCKS_SOAK=1 BLOCKS_SOAK_EPOCHS=$(SOAK_EPOCHS) $(GO) test -count=1 -timeout 60m -run '^TestSoak$$' -v ./scripts/

# Native Go fuzzing, each target for FUZZTIME (make test runs their seed
# corpora, testdata/fuzz/, as regression tests).
FUZZTIME ?= 10m
# Minimizing a new input of a large target (a whole checkpoint) would
# otherwise take a minute each time.
FUZZMINTIME ?= 5s
FUZZ_TARGETS := ./starlib:FuzzBuiltins ./starlib:FuzzParseOverride ./fuel/datasets:FuzzReadIDX ./train/checkpoint:FuzzDecode ./train/checkpoint:FuzzDecodeMember ./train/checkpoint:FuzzDecodeNPZ ./fuel/server:FuzzDecodeArrays ./fuel/server:FuzzDecodeMessage ./fuel/h5:FuzzSplitDecoding ./fuel/h5:FuzzVlenShapes ./starlib:FuzzArrayShapes ./train/checkpoint:FuzzTarStructure ./fuel/h5:FuzzDeclaredShapes ./fuel/datasets:FuzzIDXHeader ./starlib:FuzzFuelData ./starlib:FuzzFuelMethods ./fuel/converters:FuzzParseMat ./fuel/converters:FuzzMatConverters ./fuel/h5:FuzzH5Files ./cmd/dashboard:FuzzHandlers ./cmd/blocks-repl:FuzzDecodeMessage ./cmd/blocks-repl:FuzzNotebookScript
fuzz: test-deps
	@BLOCKS_SHARED=$(SHARED) GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINTIME=$(FUZZMINTIME) ./scripts/fuzz.sh $(FUZZ_TARGETS)

# Every fuzz target for a few seconds (.ci/run, after the tests): a change
# that breaks a target's property shows at once. Crashers land in
# testdata/fuzz/ and become regression tests.
FUZZSHORT ?= 5s
fuzz-short:
	$(MAKE) fuzz FUZZTIME=$(FUZZSHORT)

# The data server against the same stream in-process: MNIST batches of
# 256, batches/s and MB/s (docs/fuel-server.md has the numbers).
bench-server: test-deps
	$(GO) test -run XXX -bench "MNIST|Transport" -benchtime 40x -count 5 ./fuel/server/

# Fuel's data path side by side with h5py + numpy: MNIST from HDF5 in
# batches of 256 through Flatten, ScaleAndShift and Cast (examples/s, ratio).
bench-fuel: test-deps
	@BLOCKS_SHARED=$(SHARED) ./scripts/bench_fuel.sh
	BLOCKS_SHARED=$(SHARED) $(GO) test -run X -bench 'MNISTStream|MultiProcessing' -benchtime 15x ./fuel/streams ./fuel/transformers

# Data-parallel training at 1, 2 and 4 processes on this host: ms per
# step, bytes sent, time in collectives (docs/distributed.md).
bench-distributed: test-deps build
	@BLOCKS_SHARED=$(SHARED) ./scripts/bench_distributed.sh

clean:
	rm -rf bin

# The checkpoint kill test with many trials (20 runs, 4 SIGKILLs each).
accept-checkpoint: test-deps
	BLOCKS_SHARED=$(SHARED) BLOCKS_ACCEPT=1 $(GO) test -count=1 -timeout 30m -run Accept -v ./cmd/blocks-repl/ ./train/checkpoint/
