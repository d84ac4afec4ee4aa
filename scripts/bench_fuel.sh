#!/usr/bin/env bash
# The fuel/h5 MNIST stream benchmark, side by side: MNIST's train split in
# batches of 256 through Flatten, ScaleAndShift(1/255) and Cast to float32,
# here (go test -bench in fuel/h5) and in a vectorized Python h5py + numpy
# loop producing the same batches (fuel/h5/testdata/bench_mnist.py, Debian's
# /usr/bin/python3), on the same converted file, alternating runs so that
# both see the same machine load. Two modes: "memory" (load_in_memory=True,
# Fuel's MNIST default; the split's read is timed) and "file" (every batch
# read from the file by hyperslab). Prints medians of examples/s and ratios,
# and, for reference, the Go reads alone. The Go consumer releases each
# batch when done, as the main loop does after its step (nd.Recycler).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${BLOCKS_SHARED:-$(cd .. && pwd)/shared}
runs=${BENCH_RUNS:-5}
[ -d "$shared/data/mnist" ] || { echo "bench_fuel: MNIST not found under $shared/data/mnist" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/blocks-repl" ./cmd/blocks-repl
"$tmp/blocks-repl" fuel convert mnist -d "$shared/data/mnist" -o "$tmp" >/dev/null
go test -c -o "$tmp/h5.test" ./fuel/h5

declare -A go_r py_r
for i in $(seq "$runs"); do
  for mode in Memory File ReadOnly; do
    bench="MNISTStream$mode"
    [ "$mode" = ReadOnly ] && bench=MNISTReadFile
    ex=$(BLOCKS_BENCH_MNIST="$tmp/mnist.hdf5" "$tmp/h5.test" -test.run '^$' -test.bench "$bench\$" -test.benchtime 3x |
      awk '/examples\/s/ {for (i=1;i<=NF;i++) if ($(i+1)=="examples/s") print $i}')
    go_r[$mode]="${go_r[$mode]:-} $ex"
  done
  while read -r _ m e; do
    mode=${m#mode=}; mode=${mode^}
    py_r[$mode]="${py_r[$mode]:-} ${e#ex_per_s=}"
  done < <(/usr/bin/python3 fuel/h5/testdata/bench_mnist.py "$tmp/mnist.hdf5" 1)
  echo "run $i: go memory ${go_r[Memory]##* } file ${go_r[File]##* }; python memory ${py_r[Memory]##* } file ${py_r[File]##* } examples/s"
done
median() { printf '%s\n' $@ | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for mode in Memory File; do
  g=$(median ${go_r[$mode]}); p=$(median ${py_r[$mode]})
  echo "median examples/s, ${mode,,}: blocks-go $g, python h5py+numpy $p, ratio $(awk -v a="$g" -v b="$p" 'BEGIN {printf "%.2f", a/b}')x"
done
echo "for reference (file mode, blocks-go only): HDF5 reads alone $(median ${go_r[ReadOnly]}) examples/s"
