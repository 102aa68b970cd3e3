#!/bin/bash
# 2 ranks, native: collectives with malloc'd (-d malloc) and MPI_Alloc_mem (heap) buffers,
# wharf with the CMA calibration (new) against WHARF_CMA_SLOW_RATIO=0 (old); output coll3.txt
cd /work/wt
for rep in 1 2 3; do for mem in malloc heap; do for b in bcast allgather reduce allreduce gather; do
  for cfg in new old; do case $cfg in new) e="X=1";; old) e="WHARF_CMA_SLOW_RATIO=0";; esac
    d=""; [ $mem = malloc ] && d="-d malloc"
    env $e build/bin/wharfrun -n 2 build/bench-suite/wharf/wh_$b -m 65536:1048576 -i 1000 -x 100 $d 2>&1 |
      grep -v "^#" | awk -v r=$rep -v b=$b-$mem -v c=$cfg '{print r, b, c, $1, $2}'
  done; done; done; done
