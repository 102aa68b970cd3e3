#!/bin/bash
# device-buffer bandwidth per scheme, native, GPUs 0,1 (NVLink peers in topo4), 3 interleaved reps; plus the emulator's own copy rates
cd /work/main
E="LD_LIBRARY_PATH=build/cudaemu CUDAEMU_TOPOLOGY=$PWD/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1"
for rep in 1 2 3; do
  for s in auto ipc pipeline staged; do
    echo "rep $rep scheme $s: $(env $E WHARF_CUDA_SCHEME=$s timeout 120 build/bin/wharfrun -n 2 /tmp/bsl/wh_bw -d cuda -m 1M:4M -i 50 -x 5 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')"
  done
  for n in 1048576 4194304; do echo "rep $rep bound: $(env $E /tmp/gab/bound $n 50)"; done
done
