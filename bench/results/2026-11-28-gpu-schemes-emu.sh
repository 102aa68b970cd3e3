#!/bin/bash
# The other device schemes with this session's emulator and libmpi (ww) against main's (mm):
# native, GPUs 0,1 of topo4, default timing model, wh_bw -d cuda 64K:4M and wh_latency -d cuda
# 8 B and 1 MiB, per WHARF_CUDA_SCHEME, 2 interleaved reps.
W=${W:-/work/wt}; M=${M:-/work/main}
E="CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1"
for rep in 1 2; do
  for sch in auto ipc staged eager; do
    for cfg in mm:bsl:$M ww:bsw:$W; do
      IFS=: read n b e <<<"$cfg"
      bw=$(env $E WHARF_CUDA_SCHEME=$sch LD_LIBRARY_PATH=$e/build/cudaemu timeout 300 $W/build/bin/wharfrun -n 2 /tmp/$b/wh_bw -d cuda -m 64K:4M -i 20 -x 3 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')
      lat=$(env $E WHARF_CUDA_SCHEME=$sch LD_LIBRARY_PATH=$e/build/cudaemu timeout 300 $W/build/bin/wharfrun -n 2 /tmp/$b/wh_latency -d cuda -m 8:8 -i 2000 2>&1 | awk '/^8 /{printf "8:%s ", $2}')
      echo "rep $rep $sch $n: bw $bw lat $lat"
    done
  done
done
