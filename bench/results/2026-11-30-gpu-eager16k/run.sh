#!/bin/bash
# Device-buffer eager limit: default (4 KiB) against WHARF_CUDA_EAGER_MAX=E, the coordinator with its
# built-in switch points (no tuning file), wh_latency and wh_bw -d cuda 1 KiB-64 KiB, native (GPUs
# 0,1 of topo4: CUDA IPC) and pidpriv (one GPU per container: staged/pipeline), REPS interleaved.
# Usage: run.sh REPS E > out.txt   (binaries: /tmp/bsw)
W=${W:-/work/wt}
REPS=${1:-3}; EM=${2:-16384}
B="LD_LIBRARY_PATH=$W/build/cudaemu CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt WHARF_CUDA=1"
row() { grep -E '^[0-9]' | awk '{printf "%s:%s ", $1, $2}'; echo; }
for rep in $(seq $REPS); do
  for e in 4096 $EM; do
    for b in wh_latency wh_bw; do
      it="-i 300 -x 30"; [ $b = wh_bw ] && it="-i 30 -x 5"
      echo "rep $rep eager $e native $b: $(env $B WHARF_CUDA_EAGER_MAX=$e CUDAEMU_VISIBLE=0,1 timeout 300 $W/build/bin/wharfrun -n 2 /tmp/bsw/$b -d cuda -m 1K:64K $it 2>&1 | row)"
      echo "rep $rep eager $e pidpriv $b: $(env $B WHARF_CUDA_EAGER_MAX=$e CUDAEMU_VISIBLE_FILE=$W/tests/cudaemu/containers.txt python3 $W/tests/scenarios/wharfns.py run pidpriv -n 2 --wharfrun $W/build/bin/wharfrun --timeout 300 -- /tmp/bsw/$b -d cuda -m 1K:64K $it 2>&1 | row)"
    done
  done
done
