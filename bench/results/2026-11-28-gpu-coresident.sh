#!/bin/bash
# Co-resident containers with one GPU each (tests/cudaemu/containers.txt: no CUDA IPC between them),
# device buffers, 1 and 4 MiB: the node path (auto: the pipeline) against the network path (net),
# shared and pidpriv scenarios, 3 interleaved reps. Binaries: /tmp/bsw (this tree's mpicc).
W=${W:-/work/wt}
E="LD_LIBRARY_PATH=$W/build/cudaemu CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE_FILE=$W/tests/cudaemu/containers.txt WHARF_CUDA=1"
for rep in 1 2 3; do
  for sc in shared pidpriv; do
    for ch in auto net; do
      echo "rep $rep $sc $ch: $(env $E WHARF_CHANNEL=$ch python3 $W/tests/scenarios/wharfns.py run $sc -n 2 --wharfrun $W/build/bin/wharfrun --timeout 120 -- /tmp/bsw/wh_bw -d cuda -m 1M:4M -i 30 -x 5 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')"
    done
  done
done
