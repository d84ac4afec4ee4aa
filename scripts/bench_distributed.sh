#!/bin/sh
# make bench-distributed: the per-step time, the bytes each process sends
# and the time in collectives of data-parallel training at N = 1, 2 and 4
# processes on this host (loopback, oversubscribed where N exceeds the
# cores), for the tutorial MLP, LeNet and lstm-lm, REPS rounds interleaved
# (docs/distributed.md has the numbers and the scaling model built on
# them). Each line is process 0's BLOCKS_MPI_STATS line; "k" is the number
# of microbatches (k=1 on one process is plain training).
set -e
BIN=${BIN:-$(pwd)/bin/blocks-repl}
SCRIPTS=$(pwd)/scripts
export FUEL_DATA_PATH=${FUEL_DATA_PATH:-$BLOCKS_SHARED/data/mnist}
export BLOCKS_MPI_STATS=1
REPS=${REPS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
echo "load: $(uptime)"
for rep in $(seq "$REPS"); do
  for model in mlp-tutorial lenet lstm-lm; do
    case $model in
      mlp-tutorial) script=$SCRIPTS/bench_mlp_tutorial.star; set="" ;;
      lenet) script=$SCRIPTS/bench_lenet.star; set="--set num_batches=40" ;;
      lstm-lm) script=$SCRIPTS/distributed_lstm_lm.star; set="--set steps=12" ;;
    esac
    for cfg in 1:1 1:4 2:4 4:4; do
      np=${cfg%:*}; k=${cfg#*:}
      if [ "$np" = 1 ]; then launch=""; else launch="--np $np"; fi
      # shellcheck disable=SC2086
      "$BIN" run $launch --microbatches "$k" $set "$script" 2>&1 >/dev/null |
        grep "^mpi stats: process 0" | sed "s/^mpi stats: process 0 of [0-9]*:/$model np=$np k=$k:/"
    done
  done
done
echo "load: $(uptime)"
