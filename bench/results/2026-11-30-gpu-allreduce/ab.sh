#!/bin/bash
# A/B: device-buffer allreduce, libmpi of main (before) vs this tree (after), same binaries, interleaved
cd /work/wt
B=build
export WHARF_CUDA=1 CUDAEMU_TOPOLOGY=$PWD/tests/cudaemu/topo4.txt
for rep in 1 2 3; do
 for np in 2 4; do
  for sc in native pidpriv; do
   for v in before after; do
    L=$PWD/$B/lib; [ $v = before ] && L=/tmp/wt-main/build/lib
    echo "== rep $rep np $np $sc $v"
    if [ $sc = native ]; then
      LD_LIBRARY_PATH=$PWD/$B/cudaemu:$L CUDAEMU_VISIBLE=0,1,2,3 $B/bin/wharfrun -n $np --timeout 200 /tmp/bsw/wh_allreduce -d cuda -m 8:1M -i 1000 -x 50 | grep -v '^#'
    else
      CUDAEMU_VISIBLE_FILE=$PWD/tests/cudaemu/containers.txt python3 tests/scenarios/wharfns.py run $sc -n $np --wharfrun $B/bin/wharfrun --timeout 200 -- env LD_LIBRARY_PATH=$PWD/$B/cudaemu:$L /tmp/bsw/wh_allreduce -d cuda -m 8:1M -i 1000 -x 50 | grep -v '^#'
    fi
   done
  done
 done
done
