#!/bin/bash
# single-copy (CMA) allgather and bcast against the cell algorithms (WHARF_COLL_CMA=0) and Open MPI,
# 2 and 4 ranks on 2 cores, 64 KiB-1 MiB, 3 interleaved reps (wh_* of this tree's mpicc in /tmp/bsw)
W=${W:-/work/wt}
OMPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe"
a="-m 65536:1048576 -i 1000 -x 50"
f() { grep -E '^[0-9]' | awk '{printf "%s:%.1f ", $1, $2}'; }
for rep in 1 2 3; do
  for np in 2 4; do
    for b in allgather bcast; do
      echo "rep $rep np $np $b cma: $($W/build/bin/wharfrun -n $np /tmp/bsw/wh_$b $a 2>&1 | f)"
      echo "rep $rep np $np $b cells: $(WHARF_COLL_CMA=0 $W/build/bin/wharfrun -n $np /tmp/bsw/wh_$b $a 2>&1 | f)"
      echo "rep $rep np $np $b openmpi: $($OMPI -n $np /tmp/bs-openmpi/wh_$b $a 2>&1 | f)"
    done
  done
done
