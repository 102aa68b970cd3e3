#!/bin/sh
# Interleaved A/B of remote-GPU peer copies: BEFORE and AFTER are wharf trees (built), REPS
# repetitions, 2 GB/s device model (the slowest stage), socket transport, two emulated servers.
#   sh ab.sh BEFORE AFTER REPS > ab.txt
B=$1; A=$2; R=${3:-5}
for rep in $(seq 1 "$R"); do
  for side in before after; do
    t=$B; [ $side = after ] && t=$A
    echo "## rep $rep $side"
    (cd "$t" && CUDAEMU_D2H_GBPS=2 CUDAEMU_H2D_GBPS=2 timeout 300 python3 tests/rgpu/rgpu_harness.py --build build \
       --transport socket --server 0 --server 1 run -- build/bench/rgpu/rgpu_bench copy 67108864 2>&1 | grep -E '^ +[0-9]')
  done
done
