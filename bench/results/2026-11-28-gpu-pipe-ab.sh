#!/bin/bash
# Device pipeline A/B, native, GPUs 0,1 of topo4, 3 interleaved reps, wh_bw -d cuda:
#   A = main's libmpi (/tmp/bsl, built by main's mpicc) with the emulator's helping off
#   B = main's libmpi with helping on (the emulator of this tree)
#   C = this tree's libmpi (pipeline publishes each chunk as it completes) with helping on
# plus the pipeline's bound on this machine: both stages copying at once (2026-11-28-gpu-bound-pair.c).
W=${W:-/work/wt}; M=${M:-/work/main}
make -s -C $W/bench/suite MPICC=$M/build/bin/mpicc OUT=/tmp/bsl >/dev/null
make -s -C $W/bench/suite MPICC=$W/build/bin/mpicc OUT=/tmp/bsw >/dev/null
gcc -O2 -o /tmp/gab/pair $W/bench/results/2026-11-28-gpu-bound-pair.c -I$W/build/cuda-header/include -L$W/build/cudaemu -lcuda
E="LD_LIBRARY_PATH=$W/build/cudaemu CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1"
for rep in 1 2 3; do
  for s in pipeline auto; do
    for cfg in A:bsl:0 B:bsl:1 C:bsw:1; do
      IFS=: read n b h <<<"$cfg"
      echo "rep $rep $s $n: $(env $E CUDAEMU_HELP=$h WHARF_CUDA_SCHEME=$s timeout 120 $W/build/bin/wharfrun -n 2 /tmp/$b/wh_bw -d cuda -m 256K:4M -i 50 -x 5 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')"
    done
  done
  for n in 262144 1048576 4194304; do echo "rep $rep pair: $(env $E /tmp/gab/pair $n 0.5)"; done
done
