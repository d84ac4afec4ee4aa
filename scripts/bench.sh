#!/usr/bin/env bash
# make bench: blocks-go against PyTorch (../shared/bench/run-torch.sh) on the
# same machine, in one command. The Go side is go test -bench benchmarks
# (package bench, scripts' BenchmarkReverseWords); their output is kept,
# benchstat-ready, in BENCH_OUT (default a new temporary directory).
#  1. The table (bench/report, the benchmarks BenchmarkMLPTutorialStep ...
#     BenchmarkLSTMBigStep and BenchmarkProducts): per model, BENCH_RUNS
#     (default 5) interleaved rounds of one epoch's worth of training steps
#     here, one PyTorch epoch, and the step's matrix products alone (the
#     matrix-multiply limit, BenchmarkProducts: every row's, LeNet's
#     convolutions as the GEMMs they lower to, the recurrent models' per-step
#     products); medians, ratio, allocations per step, the share of the
#     limit, and the peak RSS of the benchmark process beside PyTorch's
#     process (its data set included).
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
#  4. Out of core (BENCH_OOC=0 skips): BenchmarkOutOfCore, H5PYDataset with
#     load_in_memory=False reading shuffled batches of 128 from a 2 GB file
#     it makes, cold pages, beside h5py (bench/h5py_read.py) on the same
#     sorted index lists.
#  5. End to end (BENCH_EPOCH=0 skips): the tutorial script by the wall
#     clock, BENCH_E2E_EPOCHS (5) epochs of full MNIST through blocks-repl
#     minus a 1-batch run (and with MultiProcessing's prefetch), beside
#     PyTorch the same way (bench/torch_e2e.py: Dataset + DataLoader over the
#     same files) and its compute-only epoch (run-torch.sh mlp-tutorial);
#     the main loop's profile of one run (BLOCKS_PROFILE=1); then
#     reverse_words.star's attention model (training tokens/s, beam search
#     words/s) and LeNet's epoch (scripts/bench_lenet.star) beside PyTorch's;
#     a Linear defined in a script against the built-in one
#     (BenchmarkScriptLinearStep: step time of each and their ratio).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${BLOCKS_SHARED:-$(cd .. && pwd)/shared}
export BLOCKS_SHARED=$shared
runs=${BENCH_RUNS:-5}
[ -d "$shared/data/mnist" ] || { echo "bench: MNIST not found under $shared/data/mnist" >&2; exit 1; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
out=${BENCH_OUT:-$(mktemp -d /tmp/bench-XXXXXX)}
mkdir -p "$out"
# exps: the ex_per_s of RESULT lines; benchline FILE NAME RATE: an end-to-end
# rate as a benchmark line (ns/op is per example), for benchstat; median.
exps() { awk '/^RESULT/ {for (i=1;i<=NF;i++) if ($i ~ /^ex_per_s=/) {sub("ex_per_s=","",$i); print $i}}'; }
benchline() { [ -n "$3" ] && awk -v n="$2" -v r="$3" 'BEGIN {printf "BenchmarkEndToEnd/%s 1 %.0f ns/op %s examples/s\n", n, 1e9/r, r}' >> "$1"; return 0; }
median() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
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
  # Resuming a 1 GB checkpoint (784-6400x3-10 MLP with Adam; BENCH_RESUME=0
  # skips: it needs ~3 GB of memory and 1 GB of disk): seconds of Read and
  # Restore with the file's pages dropped, peak RSS per byte of state, the
  # resume's way (mode=deferred) beside Read then copy; the floors (the
  # model built alone, the file read from the disk) in the log lines.
  if [ "${BENCH_RESUME:-1}" != 0 ]; then
    echo "== resume: a 1 GB checkpoint (784-6400x3-10 MLP with Adam); load $(cut -d' ' -f1-3 /proc/loadavg)"
    "$out/bench.test" -test.v -test.run '^$' -test.bench '^BenchmarkResume$' -test.benchtime 1x | tee -a "$out/go.txt" | grep -E '^(Benchmark.*-[0-9]|    )'
  fi
  if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch >/dev/null 2>&1 || true
  fi
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/torch_save.py . | grep RESULT
  else
    echo "torch.save: python3-torch is not installed and could not be installed"
  fi
fi

# Out of core (issue 37; BENCH_OOC=0 skips): H5PYDataset(load_in_memory=False)
# reading shuffled batches of 128 from a file of BENCH_OOC_MB (default 2048)
# MB that the benchmark makes in $out (removed after, unless BENCH_OOC_KEEP=1
# keeps it for the next run with the same BENCH_OUT), beside h5py (bench/h5py_read.py) reading the same sorted index
# lists, the file's pages dropped before each side's read.
if [ "${BENCH_OOC:-1}" != 0 ]; then
  echo
  oocmb=${BENCH_OOC_MB:-2048}
  oocb=${BENCH_OOC_BATCHES:-200}
  echo "== out of core: H5PYDataset(load_in_memory=False), $oocb shuffled batches of 128 from a ${oocmb} MB file (3 KB rows), cold pages, beside h5py on the same sorted index lists; load $(cut -d' ' -f1-3 /proc/loadavg)"
  ours=(); theirs=()
  for i in $(seq "${BENCH_OOC_RUNS:-3}"); do
    ex=$(cd bench && BENCH_OOC_MB=$oocmb BENCH_OOC_FILE="$out/ooc.hdf5" BENCH_OOC_INDEX="$out/ooc-index.bin" "$out/bench.test" -test.run '^$' \
      -test.bench '^BenchmarkOutOfCore$' -test.benchtime "${oocb}x" | tee -a "$out/go.txt" |
      awk '/^BenchmarkOutOfCore/ {for (i=3;i<NF;i++) if ($(i+1)=="examples/s") print $i}')
    th=$(/usr/bin/python3 bench/h5py_read.py "$out/ooc.hdf5" "$out/ooc-index.bin" | exps)
    echo "run $i: H5PYDataset $ex examples/s, h5py $th examples/s; load $(cut -d' ' -f1-3 /proc/loadavg)"
    benchline "$out/torch.txt" out-of-core-h5py "$th"
    ours+=("$ex"); theirs+=("$th")
  done
  m_ours=$(median "${ours[@]}"); m_theirs=$(median "${theirs[@]}")
  echo "out of core median examples/s: H5PYDataset $m_ours, h5py $m_theirs, ratio $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x (goal >= 1.5x)"
  [ "${BENCH_OOC_KEEP:-0}" = 1 ] || rm -f "$out/ooc.hdf5" # BENCH_OOC_KEEP=1 keeps it for the next run with this BENCH_OUT
fi

[ "${BENCH_EPOCH:-1}" = 0 ] && exit 0
# End to end by the wall clock (issue 37, item 4): the tutorial script
# through blocks-repl, N (BENCH_E2E_EPOCHS, default 5) epochs of full MNIST
# minus a 1-batch run, so that process start, MNIST's decoding and the
# compilation cancel; beside PyTorch the same way (bench/torch_e2e.py: a
# Dataset and DataLoader over the same files) and PyTorch's compute-only
# epoch (run-torch.sh mlp-tutorial). Then the main loop's profile of one run
# (BLOCKS_PROFILE=1: where every second of the epochs went).
echo
e2e=${BENCH_E2E_EPOCHS:-5}
e2ex=$((e2e * 234 * 256 - 256))
echo "== end to end by the wall clock: the tutorial model (784-100-10, batch 256, MNIST from the data path), $e2e epochs minus a 1-batch run, through blocks-repl and through a PyTorch Dataset/DataLoader; PyTorch's compute-only rate beside"
echo "   (also --set prefetch=True: Fuel's MultiProcessing prepares the next batch on a goroutine while the step runs)"
# wall CMD...: "SECONDS PEAK_RSS_MB" of CMD (its output dropped; nothing on
# failure), timed by a Python wrapper around it (its own start not counted).
wall() {
  /usr/bin/python3 -c 'import resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
s = time.perf_counter() - t
if r.returncode == 0:
    print("%.3f %.0f" % (s, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@"
}
rate() { awk -v n="$e2ex" -v a="$1" -v b="$2" 'BEGIN {if (a > b) printf "%.0f", n / (a - b)}'; }
printf 'pkg: blocks-repl (end to end)\n' >> "$out/go.txt"
printf 'pkg: pytorch (end to end)\n' >> "$out/torch.txt"
ours=(); pref=(); theirs=(); comp=(); orss=(); trss=()
for i in $(seq "$runs"); do
  read -r o1 _ <<< "$(FUEL_DATA_PATH="$shared/data/mnist" wall ./bin/blocks-repl run --set num_batches=1 scripts/bench_mlp_tutorial.star)"
  read -r oN oR <<< "$(FUEL_DATA_PATH="$shared/data/mnist" wall ./bin/blocks-repl run --set epochs="$e2e" scripts/bench_mlp_tutorial.star)"
  read -r q1 _ <<< "$(FUEL_DATA_PATH="$shared/data/mnist" wall ./bin/blocks-repl run --set prefetch=True --set num_batches=1 scripts/bench_mlp_tutorial.star)"
  read -r qN _ <<< "$(FUEL_DATA_PATH="$shared/data/mnist" wall ./bin/blocks-repl run --set prefetch=True --set epochs="$e2e" scripts/bench_mlp_tutorial.star)"
  read -r t1 _ <<< "$(OMP_WAIT_POLICY=passive wall /usr/bin/python3 bench/torch_e2e.py "$shared/data/mnist" --batches 1)"
  read -r tN tR <<< "$(OMP_WAIT_POLICY=passive wall /usr/bin/python3 bench/torch_e2e.py "$shared/data/mnist" --epochs "$e2e")"
  th=$("$shared/bench/run-torch.sh" mlp-tutorial | exps)
  ex=$(rate "$oN" "$o1"); pf=$(rate "$qN" "$q1"); te=$(rate "$tN" "$t1")
  echo "run $i: blocks-go $ex examples/s ($oN s - $o1 s; prefetched $pf; peak RSS $oR MB); torch DataLoader $te examples/s ($tN s - $t1 s; peak RSS $tR MB); torch compute only $th; load $(cut -d' ' -f1-3 /proc/loadavg)"
  benchline "$out/go.txt" mlp-tutorial-wall "$ex"; benchline "$out/go.txt" mlp-tutorial-wall-prefetch "$pf"
  benchline "$out/torch.txt" mlp-tutorial-dataloader-wall "$te"; benchline "$out/torch.txt" mlp-tutorial "$th"
  ours+=("$ex"); pref+=("$pf"); theirs+=("$te"); comp+=("$th"); orss+=("$oR"); trss+=("$tR")
done
m_ours=$(median "${ours[@]}"); m_pref=$(median "${pref[@]}"); m_theirs=$(median "${theirs[@]}"); m_comp=$(median "${comp[@]}")
echo "median examples/s by the wall clock: blocks-go $m_ours ($m_pref prefetched), torch DataLoader $m_theirs, torch compute only $m_comp"
echo "ratios: blocks-go / torch DataLoader $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a/b}')x, blocks-go / torch compute only $(awk -v a="$m_ours" -v b="$m_comp" 'BEGIN {printf "%.2f", a/b}')x (goal >= 1.2x)"
echo "peak RSS of the $e2e-epoch runs (data set included on both sides), medians: blocks-go $(median "${orss[@]}") MB, torch DataLoader $(median "${trss[@]}") MB"
echo "the main loop's profile of one $e2e-epoch run (BLOCKS_PROFILE=1; load $(cut -d' ' -f1-3 /proc/loadavg)):"
BLOCKS_PROFILE=1 FUEL_DATA_PATH="$shared/data/mnist" ./bin/blocks-repl run --set epochs="$e2e" scripts/bench_mlp_tutorial.star | grep -v '^RESULT'

# reverse_words.star's attention model: training tokens/s of one epoch and
# beam search words/s (PyTorch has no ready twin: our own figures).
echo
echo "== reverse_words.star (attention model): training tokens/s, beam search words/s"
go test -run '^$' -bench '^BenchmarkReverseWords$' -benchtime 1x -count "$runs" ./scripts/ | tee -a "$out/go.txt" |
  awk '/^BenchmarkReverseWords/ {for (i=3;i<NF;i++) v[$(i+1)]=$i; printf "reverse_words: training %.0f tokens/s (%.0f per CPU s), beam search %.1f words/s (%.1f per CPU s); load %s\n", v["train-tokens/s"], v["train-tokens/cpu-s"], v["beam-words/s"], v["beam-words/cpu-s"], loadavg()}
  function loadavg(  l, f) {getline l < "/proc/loadavg"; close("/proc/loadavg"); split(l, f, " "); return f[1] " " f[2] " " f[3]}'

# A Linear defined in the script (scripts/script_linear.star, issue 34)
# against the built-in in the tutorial's model: the same graph, so the
# same step time within noise; each round alternates their steps.
echo
echo "== script Linear vs built-in Linear (tutorial model, batch 256): step time"
go test -run '^$' -bench '^BenchmarkScriptLinearStep$' -benchtime 200x -count "$runs" ./scripts/ | tee -a "$out/go.txt" |
  awk '/^BenchmarkScriptLinearStep/ {for (i=3;i<NF;i++) v[$(i+1)]=$i; printf "median step: built-in %.0f ns, script %.0f ns, script/built-in %.3f (fastest steps: %.3f); load %s\n", v["builtin-ns/step"], v["script-ns/step"], v["script/builtin"], v["script/builtin-min"], loadavg()}
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
