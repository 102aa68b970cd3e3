#!/bin/bash
# device-buffer latency and bandwidth per scheme, emulator before (main: yields to the end of a modeled copy)
# and after (spins its last 50 us), same libmpi (/tmp/bsw), native, GPUs 0,1 of topo4, 3 interleaved reps
W=${W:-/work/wt}; M=${M:-/work/main}
f() { grep -E '^[0-9]' | awk '{printf "%s:%.1f ", $1, $2}'; }
for rep in 1 2 3; do
  for s in auto eager staged pipeline ipc; do
    for t in before:$M after:$W; do
      n=${t%%:*}; d=${t#*:}
      E="LD_LIBRARY_PATH=$d/build/cudaemu CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1 WHARF_CUDA_SCHEME=$s"
      echo "rep $rep lat $s $n: $(env $E timeout 120 $W/build/bin/wharfrun -n 2 /tmp/bsw/wh_latency -d cuda -m 8:1M -i 200 -x 10 2>&1 | f)"
      echo "rep $rep bw $s $n: $(env $E timeout 120 $W/build/bin/wharfrun -n 2 /tmp/bsw/wh_bw -d cuda -m 64K:4M -i 50 -x 5 2>&1 | f)"
    done
  done
done
