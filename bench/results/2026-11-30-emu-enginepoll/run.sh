#!/bin/bash
# The emulator's idle copy engines: sleeping at once (CUDAEMU_ENGINE_POLL_US=0) against polling
# 50 us first, interleaved, REPS repetitions: device-buffer latency and bandwidth (coordinator's
# choice, 8 B-4 MiB) natively (GPUs 0,1 of topo4: CUDA IPC) and in pidpriv (one GPU per
# container: the pipeline), and the node path against the network path in shared/pidpriv.
# Binaries: /tmp/bsw (bench/suite built with this tree's mpicc). Usage: run.sh REPS > out.txt
W=${W:-/work/wt}
REPS=${1:-3}
B="LD_LIBRARY_PATH=$W/build/cudaemu CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt WHARF_CUDA=1"
NS="python3 $W/tests/scenarios/wharfns.py run"
row() { grep -E '^[0-9]' | awk '{printf "%s:%s ", $1, $2}'; echo; }
for rep in $(seq $REPS); do
  for p in 0 50; do
    P="CUDAEMU_ENGINE_POLL_US=$p"
    echo "rep $rep poll $p native lat: $(env $B $P CUDAEMU_VISIBLE=0,1 timeout 300 $W/build/bin/wharfrun -n 2 /tmp/bsw/wh_latency -d cuda -m 8:4M -i 200 -x 20 2>&1 | row)"
    echo "rep $rep poll $p native bw: $(env $B $P CUDAEMU_VISIBLE=0,1 timeout 300 $W/build/bin/wharfrun -n 2 /tmp/bsw/wh_bw -d cuda -m 8:4M -i 30 -x 5 2>&1 | row)"
    for sc in pidpriv shared; do
      for ch in auto net; do
        [ $sc = shared ] && [ $ch = auto ] || [ $ch = net ] || { \
          echo "rep $rep poll $p $sc lat: $(env $B $P CUDAEMU_VISIBLE_FILE=$W/tests/cudaemu/containers.txt $NS $sc -n 2 --wharfrun $W/build/bin/wharfrun --timeout 300 -- /tmp/bsw/wh_latency -d cuda -m 8:4M -i 200 -x 20 2>&1 | row)"; }
        echo "rep $rep poll $p $sc $ch bw: $(env $B $P WHARF_CHANNEL=$ch CUDAEMU_VISIBLE_FILE=$W/tests/cudaemu/containers.txt $NS $sc -n 2 --wharfrun $W/build/bin/wharfrun --timeout 300 -- /tmp/bsw/wh_bw -d cuda -m 8:4M -i 30 -x 5 2>&1 | row)"
      done
    done
  done
done
