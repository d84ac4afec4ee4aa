#!/bin/sh
# make gpu-check, the part that runs here (the GPU machine has no Go):
# builds the CUDA build's blocks-repl and test binaries, copies the shared
# libraries they load (ldd), the dynamic loader, MNIST and the PyTorch
# baselines into gpu-check/ (ignored by git; ../shared does not travel),
# and packs it as gpu-check.tar.gz. scripts/gpu_check_run.sh runs it there.
#
# The NVIDIA driver's libcuda is not copied: it must be the GPU machine's
# own. cuBLAS is not copied either (hundreds of MB): run.sh finds the
# machine's (a CUDA install, or PyTorch's nvidia-cublas wheel), else the
# products run on the backend's own tiled kernel.
set -eu
cd "$(dirname "$0")/.."
shared=${BLOCKS_SHARED:-$(cd .. && pwd)/shared}
out=gpu-check
rm -rf "$out" "$out.tar.gz"
mkdir -p "$out/bin" "$out/lib" "$out/data/mnist" "$out/torch"
flags="-tags cuda,nompi -trimpath -ldflags=-s -ldflags=-w"
go build $flags -o "$out/bin/blocks-repl" ./cmd/blocks-repl
go test -c $flags -o "$out/bin/cuda.test" ./core/exec/cuda
go test -c $flags -o "$out/bin/bench.test" ./bench
for b in "$out"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3} /ld-linux/ && !/=>/ {print $1}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libcuda.so*) ;; # the driver's own, on the GPU machine
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
cp "$shared"/data/mnist/*.gz "$out/data/mnist/"
cp "$shared"/bench/torch_mnist.py "$shared"/bench/torch_rnn.py "$out/torch/"
tar -C . -czf "$out.tar.gz" "$out"
echo "gpu-check: $(du -sh "$out" | cut -f1) in $out/, $(du -h "$out.tar.gz" | cut -f1) packed in $out.tar.gz"
echo "on the GPU machine (this checkout, with $out.tar.gz): sh scripts/gpu_check_run.sh"
