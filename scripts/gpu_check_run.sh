#!/bin/sh
# make gpu-check, the part that runs on the GPU machine (no Go there):
# sh scripts/gpu_check_run.sh, in this checkout, with gpu-check.tar.gz (or
# gpu-check/) made by scripts/gpu_check_prepare.sh. Under 5 minutes on one
# GPU. Prints PASS or FAIL per check, and the speed table; exits 1 when a
# check fails.
#  0. the route table: every kind of op with its kernels, or why it runs on
#     the CPU;
#  1. the CUDA backend's op tests against the CPU backend (each op and its
#     gradients, float32, relative 1e-5: elementwise, reductions, softmax,
#     products, convolutions, poolings, lookups, copies) and training on
#     both devices (1e-4; every step on the GPU; two GPU runs bit-identical):
#     the MLP (SGD, and each step rule's fused update), LeNet, the LSTM and
#     GRU language models (fused sequences, SGD and Adam);
#  1b. the benchmark's own LeNet and lstm-lm: 5 steps on the GPU within
#     1e-4 of the CPU;
#  2. the tutorial script (one epoch of MNIST) on the GPU and on the CPU:
#     every printed cost and error within 1e-4 relative;
#  3. two GPU runs of the tutorial print the same bits;
#  4. a GPU checkpoint resumed on the CPU ends within 1e-4 of a CPU run;
#  5. speed: the tutorial MLP, mlp-500, LeNet and lstm-lm steps on the GPU
#     (BLOCKS_CUDA_STRICT=1: a step on the CPU fails the run) beside this
#     machine's CPU backend and PyTorch on the same GPU (torch_mnist.py /
#     torch_rnn.py --device cuda).
set -u
cd "$(dirname "$0")/.."
root=$PWD
g=$root/gpu-check
[ -d "$g" ] || tar -xzf gpu-check.tar.gz || { echo "gpu-check: no gpu-check/ nor gpu-check.tar.gz (make gpu-check on a machine with Go)"; exit 2; }
fail=0
check() { if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; fail=1; fi; }

# Libraries: ours, then the driver's libcuda and a cuBLAS from this machine.
extra=""
for d in $(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1|libcublas\.so/ {print $NF}' | xargs -r -n1 dirname | sort -u) \
         /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
  [ -d "$d" ] && extra="$extra:$d"
done
cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
[ -n "$cublas" ] && extra="$extra:$cublas"
loader=$(ls "$g"/lib/ld-linux-x86-64.so.2)
R() { "$loader" --library-path "$g/lib$extra" "$@"; }
export FUEL_DATA_PATH=$g/data/mnist FUEL_FLOATX=float32

echo "== $(nvidia-smi -L 2>/dev/null | head -1); $(nproc) CPUs"
R "$g/bin/blocks-repl" version

echo "== 0. routes (every kind of op: its kernels, or why on the CPU)"
# (the package's tests read its sources: they run in its directory)
( cd "$root/core/exec/cuda" && R "$g/bin/cuda.test" -test.run 'TestRoutesCoverEverySpecKind$' -test.v -test.count=1 2>&1 ) | sed -n 's/^ *route_test.go:[0-9]*: /  /p'

echo "== 1. op tests (CUDA vs CPU)"
( cd "$root/core/exec/cuda" && R "$g/bin/cuda.test" -test.v -test.count=1 >"$g/optests.txt" 2>&1 )
r=$?
grep -E '^(--- |    --- FAIL|ok|FAIL|PASS|panic)|_test.go:[0-9]+:' "$g/optests.txt" | grep -v -E -- '--- PASS: Test(OpsMatchCPU|ExtOpsMatchCPU)/|route_test.go' | head -150
[ $r = 0 ] || tail -3 "$g/optests.txt"
check $r "op tests: every op and gradient within 1e-5; MLP (each step rule), LeNet, LSTM and GRU LMs trained within 1e-4, all steps on the GPU, bit-identical reruns"

echo "== 1b. the benchmark's LeNet (batch 64) and lstm-lm, 5 steps, GPU vs CPU"
R "$g/bin/bench.test" -test.run 'TestBenchModelsGPUMatchCPU' -test.v -test.count=1 >"$g/benchmodels.txt" 2>&1
r=$?
grep -E '^(    )?--- |_test.go:[0-9]+:|^panic' "$g/benchmodels.txt"
[ $r = 0 ] || tail -3 "$g/benchmodels.txt"
check $r "LeNet and lstm-lm: every trained variable within 1e-4 of the CPU's after 5 steps"

echo "== 2. tutorial, one epoch, GPU vs CPU"
tmp=$(mktemp -d)
( cd "$tmp" && R "$g/bin/blocks-repl" run --device cuda "$root/scripts/mnist_tutorial.star" >gpu1.txt 2>&1 )
g1=$?
( cd "$tmp" && R "$g/bin/blocks-repl" run --device cpu "$root/scripts/mnist_tutorial.star" >cpu.txt 2>&1 )
cmp_costs() { # file file tolerance
  paste -d '|' "$1" "$2" | awk -F'|' -v tol="$3" '
    /: *[-0-9.e]+ *\|/ {
      split($1, x, ":"); split($2, y, ":")
      if (x[1] != y[1]) { print "line " NR ": " $1 " / " $2; bad = 1; next }
      d = x[2] - y[2]; if (d < 0) d = -d; m = x[2]; if (m < 0) m = -m
      if (d > tol * m + 1e-7) { print "beyond " tol ": " $1 " / " $2; bad = 1 }
      n++ }
    END { if (n == 0) { print "no numbers compared"; exit 1 } exit bad }'
}
grep -E ':' "$tmp/gpu1.txt" | tail -20
cmp_costs "$tmp/gpu1.txt" "$tmp/cpu.txt" 1e-4
check $? "tutorial: GPU and CPU costs within 1e-4 after one epoch"

echo "== 3. two GPU runs"
( cd "$tmp" && R "$g/bin/blocks-repl" run --device cuda "$root/scripts/mnist_tutorial.star" >gpu2.txt 2>&1 )
g2=$?
grep -v -i -E 'time|took|seconds' "$tmp/gpu1.txt" >"$tmp/a"; grep -v -i -E 'time|took|seconds' "$tmp/gpu2.txt" >"$tmp/b"
[ $g1 = 0 ] && [ $g2 = 0 ] && cmp -s "$tmp/a" "$tmp/b"
check $? "two GPU runs of the tutorial print the same numbers"

echo "== 4. a GPU checkpoint resumed on the CPU"
sed -e 's|^load("blocks.extensions", "FinishAfter", "Printing")$|load("blocks.extensions", "FinishAfter", "Printing")\nload("blocks.extensions.saveload", "Checkpoint")\nload("blocks.config", "config")|' \
    -e 's|FinishAfter(after_n_epochs = 1)|FinishAfter(after_n_batches = config.get("steps", 200)), Checkpoint("ck.tar", every_n_batches = 100)|' \
    "$root/scripts/mnist_tutorial.star" >"$tmp/ck.star"
mkdir -p "$tmp/mixed" "$tmp/cpuonly"
( cd "$tmp/mixed" && R "$g/bin/blocks-repl" run --device cuda --set steps=100 ../ck.star >run.txt 2>&1 &&
  R "$g/bin/blocks-repl" resume --device cpu --set steps=200 ck.tar >resume.txt 2>&1 )
r1=$?
( cd "$tmp/cpuonly" && R "$g/bin/blocks-repl" run --device cpu --set steps=200 ../ck.star >run.txt 2>&1 )
python3 - "$tmp/mixed/ck.tar" "$tmp/cpuonly/ck.tar" <<'PY'
import io, sys, tarfile
import numpy as np
def params(p):
    with tarfile.open(p) as t:
        return dict(np.load(io.BytesIO(t.extractfile("_parameters").read())))
a, b = params(sys.argv[1]), params(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
worst = max(float(np.max(np.abs(a[k] - b[k]) / (np.abs(b[k]) + 1e-3))) for k in a)
print("largest relative difference of a parameter: %.3g" % worst)
sys.exit(0 if worst < 1e-4 else 1)
PY
r2=$?
[ $r1 = 0 ] || tail -5 "$tmp/mixed/"*.txt
check $((r1 + r2)) "100 steps on the GPU resumed for 100 on the CPU end within 1e-4 of 200 CPU steps"

echo "== 5. speed on this GPU (examples/s; tokens/s for lstm-lm)"
bench() { # device benchmark-regexp metric steps
  BLOCKS_CUDA_STRICT=1 BLOCKS_DEVICE=$1 R "$g/bin/bench.test" -test.run XXX -test.bench "$2" -test.benchtime "$4" >"$g/bench-$1.err" 2>&1
  awk -v m="$3" '/^Benchmark/ {for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}' "$g/bench-$1.err" | tail -1
}
torch() { # script model metric
  python3 "$g/torch/$1" "$2" --device cuda $( [ "$1" = torch_mnist.py ] && echo --data "$g/data/mnist" ) 2>/dev/null |
    awk -v m="$3" '/^RESULT/ {for (i = 1; i <= NF; i++) if (index($i, m "=") == 1) print substr($i, length(m) + 2)}'
}
printf '%-14s %14s %14s %14s %8s\n' model blocks-go-gpu blocks-go-cpu torch-gpu ratio
for row in "mlp-tutorial BenchmarkMLPTutorialStep$ examples/s torch_mnist.py ex_per_s" \
           "mlp-500 BenchmarkMLP500Step$ examples/s torch_mnist.py ex_per_s" \
           "lenet BenchmarkLeNetStep$/batch=64$ examples/s torch_mnist.py ex_per_s" \
           "lstm-lm BenchmarkLSTMLMStep$ tokens/s torch_rnn.py tokens_per_s"; do
  set -- $row
  ours=$(bench cuda "$2" "$3" 300x); cpu=$(bench cpu "$2" "$3" 20x); theirs=$(torch "$4" "$1" "$5")
  [ -n "$ours" ] || { echo "$1 on the GPU failed:"; tail -3 "$g/bench-cuda.err"; fail=1; }
  printf '%-14s %14s %14s %14s %8s\n' "$1" "${ours:-?}" "${cpu:-?}" "${theirs:-?}" "$(awk -v a="${ours:-0}" -v b="${theirs:-0}" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "?" }')"
done
rm -rf "$tmp"
[ $fail = 0 ] && echo "gpu-check: all checks passed" || echo "gpu-check: some checks FAILED"
exit $fail
