#!/usr/bin/env bash
# make bench: blocks-go against PyTorch (../shared/bench/run-torch.sh) on the
# same machine, in one command. The Go side is go test -bench benchmarks
# (package bench, scripts' BenchmarkReverseWords); their output is kept,
# benchstat-ready, in BENCH_OUT (default a new temporary directory).
#  1. The table (bench/report, the benchmarks BenchmarkMLPTutorialStep ...
#     BenchmarkLSTMBigStep and BenchmarkProducts): per model, BENCH_RUNS
#     (default 5) interleaved rounds of one epoch's worth of training steps
#     here, one PyTorch epoch, and the step's matrix products alone (the
#     matrix-multiply limit); medians, ratio, allocations per step, and the
#     peak RSS of the benchmark process beside PyTorch's process (its data set
#     included).
#     The recurrent rows (lstm-lm, gru-lm, lstm-big: torch_rnn.py's models)
#     print their warm-up first (BenchmarkRecurrentWarmup);
#     BENCH_MODELS=lstm-lm,gru-lm selects rows.
#  2. The scaling table and plot (BenchmarkMLPScaling): the MLP over batch
#     sizes 32-1024 and hidden sizes 100-2000, here and in PyTorch; the plot
#     is written to docs/bench_scaling.png (BENCH_PLOT overrides;
#     BENCH_SCALING=false skips it).
#  3. Checkpoints (BENCH_CHECKPOINT=0 skips): BenchmarkCheckpointStall (the
#     stall a save adds, write rate beside dd conv=fsync, RSS added) beside
#     torch.save (bench/torch_save.py).
#  4. End to end (BENCH_EPOCH=0 skips): the tutorial script, one epoch over
#     full MNIST through blocks-repl, data pipeline included (and with
#     MultiProcessing's prefetch), beside run-torch.sh mlp-tutorial; then
#     reverse_words.star's attention model (training tokens/s, beam search
#     words/s).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${BLOCKS_SHARED:-$(cd .. && pwd)/shared}
export BLOCKS_SHARED=$shared
runs=${BENCH_RUNS:-5}
[ -d "$shared/data/mnist" ] || { echo "bench: MNIST not found under $shared/data/mnist" >&2; exit 1; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
out=${BENCH_OUT:-$(mktemp -d /tmp/bench-XXXXXX)}
mkdir -p "$out"
go test -c -o "$out/bench.test" ./bench/
go run ./bench/report -test "$out/bench.test" -shared "$shared" -runs "$runs" -out "$out" \
  ${BENCH_MODELS:+-models "$BENCH_MODELS"} -scaling="${BENCH_SCALING:-true}" -plot "${BENCH_PLOT:-$PWD/docs/bench_scaling.png}" \
  ${BENCH_TABLE_OUT:+-table-out "$BENCH_TABLE_OUT"} ${BENCH_SCALING_OUT:+-scaling-out "$BENCH_SCALING_OUT"}

# Checkpoints (issue 37; BENCH_CHECKPOINT=0 skips): the 784-2000-2000-10 MLP
# with Adam (a 67 MB checkpoint), 60 batches of 128, a save every 10:
# the stall a save adds to the training loop, the write rate beside dd
# conv=fsync, the RSS the saves add; then torch.save of the same model and
# Adam state (+ fsync) in the same run.
if [ "${BENCH_CHECKPOINT:-1}" != 0 ]; then
  echo
  echo "== checkpoints: 784-2000-2000-10 MLP with Adam (67 MB), a save every 10 of 60 batches; load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$out/bench.test" -test.run '^$' -test.bench '^BenchmarkCheckpointStall$' -test.benchtime 1x | tee -a "$out/go.txt" | grep -E '^(Benchmark|    )'
  if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch >/dev/null 2>&1 || true
  fi
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/torch_save.py . | grep RESULT
  else
    echo "torch.save: python3-torch is not installed and could not be installed"
  fi
fi

[ "${BENCH_EPOCH:-1}" = 0 ] && exit 0
echo
echo "== end to end: the tutorial script, one epoch of full MNIST through blocks-repl (data pipeline included)"
echo "   (also --set prefetch=True: Fuel's MultiProcessing prepares the next batch on a goroutine while the step runs)"
exps() { awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}'; }
# benchline FILE NAME RATE: an end-to-end rate as a benchmark line (ns/op is per example), for benchstat.
benchline() { [ -n "$3" ] && awk -v n="$2" -v r="$3" 'BEGIN {printf "BenchmarkEndToEnd/%s 1 %.0f ns/op %s examples/s\n", n, 1e9/r, r}' >> "$1"; return 0; }
printf 'pkg: blocks-repl (end to end)\n' >> "$out/go.txt"
printf 'pkg: pytorch (end to end)\n' >> "$out/torch.txt"
ours=()
plain=()
theirs=()
for i in $(seq "$runs"); do
  ex=$(FUEL_DATA_PATH="$shared/data/mnist" ./bin/blocks-repl run --set prefetch=True scripts/bench_mlp_tutorial.star | exps)
  ours+=("$ex")
  th=$("$shared/bench/run-torch.sh" mlp-tutorial | exps)
  theirs+=("$th")
  pl=$(FUEL_DATA_PATH="$shared/data/mnist" ./bin/blocks-repl run scripts/bench_mlp_tutorial.star | exps)
  plain+=("$pl")
  echo "run $i: blocks-go $pl examples/s ($ex prefetched); torch $th examples/s (compute only); load $(cut -d' ' -f1-3 /proc/loadavg)"
  benchline "$out/go.txt" mlp-tutorial "$pl"; benchline "$out/go.txt" mlp-tutorial-prefetch "$ex"; benchline "$out/torch.txt" mlp-tutorial "$th"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_ours=$(median "${ours[@]}")
m_plain=$(median "${plain[@]}")
m_theirs=$(median "${theirs[@]}")
echo "median examples/s: blocks-go $m_plain ($m_ours prefetched), torch $m_theirs, ratio $(awk -v a="$m_plain" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x ($(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x prefetched)"

# reverse_words.star's attention model: training tokens/s of one epoch and
# beam search words/s (PyTorch has no ready twin: our own figures).
echo
echo "== reverse_words.star (attention model): training tokens/s, beam search words/s"
go test -run '^$' -bench '^BenchmarkReverseWords$' -benchtime 1x -count "$runs" ./scripts/ | tee -a "$out/go.txt" |
  awk '/^BenchmarkReverseWords/ {for (i=3;i<NF;i++) v[$(i+1)]=$i; printf "reverse_words: training %.0f tokens/s (%.0f per CPU s), beam search %.1f words/s (%.1f per CPU s); load %s\n", v["train-tokens/s"], v["train-tokens/cpu-s"], v["beam-words/s"], v["beam-words/cpu-s"], loadavg()}
  function loadavg(  l, f) {getline l < "/proc/loadavg"; close("/proc/loadavg"); split(l, f, " "); return f[1] " " f[2] " " f[3]}'

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
  benchline "$out/go.txt" lenet "$ex"
  ours+=("$ex")
done
theirs=()
for i in $(seq "$lruns"); do
  ex=$("$shared/bench/run-torch.sh" lenet ${lsteps:+--steps $lsteps} | awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}')
  echo "torch lenet run $i: $ex examples/s"
  benchline "$out/torch.txt" lenet "$ex"
  theirs+=("$ex")
done
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
echo "lenet median examples/s: blocks-go $m_ours, torch $m_theirs, ratio $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x"
go test ./bench -run '^$' -bench 'LeNetStep' -benchtime 20x -benchmem | tee -a "$out/go.txt" | awk '/^BenchmarkLeNetStep/ {for (i=1;i<NF;i++) v[$(i+1)]=$i; print "lenet step " $1 ": " v["ns/op"] " ns/op, " v["B/op"] " B/op, " v["allocs/op"] " allocs/op"}'
echo
echo "benchstat-ready output: $out/go.txt (here), $out/torch.txt (PyTorch)"
