# Blocks and Fuel in Go. The two commands a newcomer needs:
#   make demo   trains the demo experiment on the MNIST subset shipped in the binary
#   make test   runs the test suite
# Both install what they need (Debian packages, Go modules) when it is missing.

GO      ?= go
BIN     := bin/blocks-repl
SHARED  ?= $(abspath ../shared)

# Debian packages: build (OpenBLAS, HDF5) and test references (numpy, h5py).
BUILD_PKGS := libopenblas-dev libhdf5-dev pkg-config
TEST_PKGS  := python3-numpy python3-h5py python3-pil

.PHONY: all build demo test accept bench deps test-deps vet fmt clean

all: build

# Installs the missing Debian packages (needs root or sudo, as on CI).
deps:
	@missing=""; for p in $(BUILD_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(GO) mod download

test-deps: deps
	@missing=""; for p in $(TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(GO) build -o $(BIN) ./cmd/blocks-repl

# The main job on the embedded default: scripts/demo.star trains an MLP on
# the MNIST subset compiled into the binary (no download) and prints the
# test error.
demo: build
	./$(BIN) run scripts/demo.star

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

test: test-deps vet
	BLOCKS_SHARED=$(SHARED) $(GO) test -count=1 -timeout 20m ./...

# Long acceptance runs (kept out of make test).
accept: test-deps build
	BLOCKS_SHARED=$(SHARED) BLOCKS_ACCEPT=1 $(GO) test -count=1 -timeout 60m -run Accept -v ./scripts/

# The tutorial model, one epoch on full MNIST, beside PyTorch on the same
# model in the same command; prints both and the ratio.
bench: test-deps build
	@BLOCKS_SHARED=$(SHARED) ./scripts/bench.sh

clean:
	rm -rf bin

# Fuel's data pipeline: MNIST from HDF5 to float32 batches beside h5py + numpy,
# and MultiProcessing overlapping a slow stream with a slow consumer.
bench-fuel: test-deps
	BLOCKS_SHARED=$(SHARED) $(GO) test -run X -bench 'MNISTStream|MultiProcessing' -benchtime 15x ./fuel/streams ./fuel/transformers
.PHONY: bench-fuel
