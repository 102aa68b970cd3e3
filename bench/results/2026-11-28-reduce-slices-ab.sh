#!/bin/bash
# large reductions before (main's build: every rank copies its whole chunk in, slices combined into the
# last rank's cell) and after (own slice kept in the rank's buffer, first combine three-operand, a reduce
# root combines its slice into rbuf), against Open MPI; 1 MiB MPI_FLOAT/MPI_SUM, 2 and 4 ranks on 2 cores,
# 5 interleaved reps. Binaries: /tmp/bsl (main's mpicc), /tmp/bsw (this tree's), /tmp/bs-openmpi.
W=${W:-/work/wt}; M=${M:-/work/main}
OMPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe"
a="-m 1048576:1048576 -i 1000 -x 50"
for rep in 1 2 3 4 5; do
  for np in 2 4; do
    for b in reduce allreduce; do
      echo "rep $rep np $np $b before: $($M/build/bin/wharfrun -n $np /tmp/bsl/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
      echo "rep $rep np $np $b after: $($W/build/bin/wharfrun -n $np /tmp/bsw/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
      echo "rep $rep np $np $b openmpi: $($OMPI -n $np /tmp/bs-openmpi/wh_$b $a 2>&1 | grep -E '^[0-9]' | awk '{print $2}')"
    done
  done
done
