#!/bin/bash
# device-buffer allreduce (wh_allreduce -d cuda) against host buffers, wharf, native/shared/pidpriv
cd /work/wt
B=build
export LD_LIBRARY_PATH=$PWD/$B/cudaemu WHARF_CUDA=1 CUDAEMU_TOPOLOGY=$PWD/tests/cudaemu/topo4.txt
for rep in 1 2 3; do
 for np in 2 4; do
  for sc in native shared pidpriv; do
   for d in host cuda; do
    echo "== rep $rep np $np $sc $d"
    if [ $sc = native ]; then
      CUDAEMU_VISIBLE=0,1,2,3 $B/bin/wharfrun -n $np --timeout 200 /tmp/bsw/wh_allreduce -d $d -m 8:1M -i 1000 -x 50 | grep -v '^#'
    else
      CUDAEMU_VISIBLE_FILE=$PWD/tests/cudaemu/containers.txt python3 tests/scenarios/wharfns.py run $sc -n $np --wharfrun $B/bin/wharfrun --timeout 200 -- /tmp/bsw/wh_allreduce -d $d -m 8:1M -i 1000 -x 50 | grep -v '^#'
    fi
   done
  done
 done
done
