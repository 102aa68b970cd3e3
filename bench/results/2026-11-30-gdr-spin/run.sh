#!/bin/bash
# The emulated GDRCopy's pacing: yielding (before: libgdrapi.so.2 copied to /tmp/gdr-old) against
# spinning (this tree), device-buffer ping-pong and bandwidth 512 B-32 KiB, coordinator defaults,
# native (GPUs 0,1) and pidpriv (one GPU per container), REPS interleaved. Binaries: /tmp/bsw.
W=${W:-/work/wt}
REPS=${1:-5}
row() { grep -E '^[0-9]' | awk '{printf "%s:%s ", $1, $2}'; echo; }
for rep in $(seq $REPS); do
  for side in old new; do
    L=$W/build/cudaemu; [ $side = old ] && L=/tmp/gdr-old:$W/build/cudaemu
    B="LD_LIBRARY_PATH=$L CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt WHARF_CUDA=1"
    for b in wh_latency wh_bw; do
      it="-i 1000 -x 100"; [ $b = wh_bw ] && it="-i 30 -x 5"
      echo "rep $rep $side native $b: $(env $B CUDAEMU_VISIBLE=0,1 timeout 300 $W/build/bin/wharfrun -n 2 /tmp/bsw/$b -d cuda -m 512:32K $it 2>&1 | row)"
      echo "rep $rep $side pidpriv $b: $(env $B CUDAEMU_VISIBLE_FILE=$W/tests/cudaemu/containers.txt python3 $W/tests/scenarios/wharfns.py run pidpriv -n 2 --wharfrun $W/build/bin/wharfrun --timeout 300 -- /tmp/bsw/$b -d cuda -m 512:32K $it 2>&1 | row)"
    done
  done
done
