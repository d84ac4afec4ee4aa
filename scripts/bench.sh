#!/usr/bin/env bash
# make bench: the Blocks tutorial's model (784-100-10 ReLU, batch 256, SGD 0.1),
# one epoch over full MNIST, here and in PyTorch on the same 2 cores, in one
# command. Prints both examples/s figures (medians of the runs) and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${BLOCKS_SHARED:-$(cd .. && pwd)/shared}
runs=${BENCH_RUNS:-5}
[ -d "$shared/data/mnist" ] || { echo "bench: MNIST not found under $shared/data/mnist" >&2; exit 1; }

ours=()
for i in $(seq "$runs"); do
  ex=$(FUEL_DATA_PATH="$shared/data/mnist" ./bin/blocks-repl run scripts/bench_mlp_tutorial.star | awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}')
  echo "blocks-go run $i: $ex examples/s"
  ours+=("$ex")
done
theirs=()
for i in $(seq "$runs"); do
  ex=$("$shared/bench/run-torch.sh" mlp-tutorial | awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}')
  echo "torch run $i: $ex examples/s"
  theirs+=("$ex")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
echo "median examples/s: blocks-go $m_ours, torch $m_theirs, ratio $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x"

# The benchmark LeNet (PyTorch baseline's: valid 5x5 convolutions of 20 and
# 50 filters, 2x2 max pooling, 800-500-10, batch 64, SGD 0.05), one epoch
# here (scripts/bench_lenet.star) and in PyTorch, then the allocations of one
# training step after the first (go test -bench LeNetStep -benchmem).
# BENCH_LENET_STEPS=N times the first N steps on both sides instead of the
# epoch (for a loaded machine).
lruns=${BENCH_LENET_RUNS:-3}
lsteps=${BENCH_LENET_STEPS:-}
ours=()
for i in $(seq "$lruns"); do
  ex=$(FUEL_DATA_PATH="$shared/data/mnist" ./bin/blocks-repl run ${lsteps:+--set num_batches=$lsteps} scripts/bench_lenet.star | awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}')
  echo "blocks-go lenet run $i: $ex examples/s"
  ours+=("$ex")
done
theirs=()
for i in $(seq "$lruns"); do
  ex=$("$shared/bench/run-torch.sh" lenet ${lsteps:+--steps $lsteps} | awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}')
  echo "torch lenet run $i: $ex examples/s"
  theirs+=("$ex")
done
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
echo "lenet median examples/s: blocks-go $m_ours, torch $m_theirs, ratio $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x"
go test ./bricks -run '^$' -bench 'LeNetStep' -benchtime 20x -benchmem | awk '/^BenchmarkLeNetStep/ {print "lenet step " $1 ": " $3 " ns/op, " $5 " B/op, " $7 " allocs/op"}'
