#!/bin/bash
# device-buffer bandwidth per scheme with the emulator's helping off and on (CUDAEMU_HELP), native,
# GPUs 0,1 of topo4 (NVLink peers), 3 interleaved reps; plus the emulator's copy rates in one process
# (2026-11-25-gpu-bound.c) and with both pipeline stages copying at once (2026-11-28-gpu-bound-pair.c).
# Run from the tree root after `make build`; the two bound programs are built into /tmp/gab.
set -e
B=${B:-build}
mkdir -p /tmp/gab /tmp/bsl
for f in 2026-11-25-gpu-bound 2026-11-28-gpu-bound-pair; do
  gcc -O2 -o /tmp/gab/$f bench/results/$f.c -I$B/cuda-header/include -L$B/cudaemu -lcuda
done
make -s -C bench/suite MPICC=$PWD/$B/bin/mpicc OUT=/tmp/bsl >/dev/null
E="LD_LIBRARY_PATH=$B/cudaemu CUDAEMU_TOPOLOGY=$PWD/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1"
for rep in 1 2 3; do
  for s in auto ipc pipeline staged; do
    for h in 0 1; do
      echo "rep $rep help $h scheme $s: $(env $E CUDAEMU_HELP=$h WHARF_CUDA_SCHEME=$s timeout 120 $B/bin/wharfrun -n 2 /tmp/bsl/wh_bw -d cuda -m 256K:4M -i 50 -x 5 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')"
    done
  done
  for n in 262144 1048576 4194304; do
    echo "rep $rep bound: $(env $E /tmp/gab/2026-11-25-gpu-bound $n 50)"
    echo "rep $rep pair: $(env $E /tmp/gab/2026-11-28-gpu-bound-pair $n 0.5)"
  done
done
