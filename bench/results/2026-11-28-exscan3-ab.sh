#!/bin/bash
# exscan and scan at 4 ranks (2 per core), 1 MiB, MPI_FLOAT/MPI_SUM: wharf before (main's build, /tmp/bsl)
# and after the three-operand reduction kernel (this tree, /tmp/bsw) against Open MPI, 5 interleaved reps.
W=${W:-/work/wt}; M=${M:-/work/main}
OMPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 4"
for rep in 1 2 3 4 5; do
  for b in exscan scan; do
    a="-m 1048576:1048576 -i 200 -x 20"
    echo "rep $rep $b before: $($M/build/bin/wharfrun -n 4 /tmp/bsl/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
    echo "rep $rep $b after: $($W/build/bin/wharfrun -n 4 /tmp/bsw/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
    echo "rep $rep $b openmpi: $($OMPI /tmp/bs-openmpi/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
  done
done
