#!/bin/bash
# alltoallv through the cells A/B: main's libmpi (point-to-point, every receive and send posted
# at once) against this tree's (blocks through the node block's cells when a rank's outgoing
# blocks fit its cell, else messages), with Open MPI and MPICH in the same run.
# Native, 2 and 4 ranks, wh_alltoallv at 8 B (20000 / 5000 iterations) and 1 MiB (msg mode
# everywhere: what the extra flag costs), 3 interleaved reps.
W=${W:-/work/wt}; M=${M:-/work/main}
make -s -C $W/bench/suite MPICC=$M/build/bin/mpicc OUT=/tmp/bsl >/dev/null
make -s -C $W/bench/suite MPICC=$W/build/bin/mpicc OUT=/tmp/bsw >/dev/null
make -s -C $W/bench/suite MPICC=mpicc.openmpi OUT=/tmp/bs-openmpi >/dev/null
make -s -C $W/bench/suite MPICC=mpicc.mpich OUT=/tmp/bs-mpich >/dev/null
O="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun.openmpi --oversubscribe"
run() { # launcher dir n args
  case $1 in
    w) $W/build/bin/wharfrun -n $3 /tmp/$2/wh_alltoallv $4 ;;
    o) $O -n $3 /tmp/$2/wh_alltoallv $4 ;;
    m) mpirun.mpich -n $3 /tmp/$2/wh_alltoallv $4 ;;
  esac 2>&1 | awk '/^[0-9]/{printf "%s ", $2}'
}
for rep in 1 2 3; do
  for n in 2 4; do
    it=$([ $n = 2 ] && echo 20000 || echo 5000)
    for cfg in main:w:bsl this:w:bsw openmpi:o:bs-openmpi mpich:m:bs-mpich; do
      IFS=: read name l d <<<"$cfg"
      echo "rep $rep n=$n $name 8B: $(run $l $d $n "-m 8:8 -i $it")  1MiB: $(run $l $d $n "-m 1M:1M -i 1000")"
    done
  done
done
