#!/bin/bash
# 2 ranks, native, -d malloc: wharf with the CMA calibration (default) against WHARF_CMA_SLOW_RATIO=0
# (CMA from 8 KiB as before), Open MPI and MPICH; interleaved repetitions
cd /work/wt
REPS=${1:-3}
for rep in $(seq 1 $REPS); do
 for b in latency bw; do
  for cfg in new old ompi mpich; do
   case $cfg in
    new) cmd="build/bin/wharfrun -n 2 build/bench-suite/wharf/wh_$b";;
    old) cmd="env WHARF_CMA_SLOW_RATIO=0 build/bin/wharfrun -n 2 build/bench-suite/wharf/wh_$b";;
    ompi) cmd="mpirun.openmpi --allow-run-as-root -n 2 build/bench-suite/openmpi/wh_$b";;
    mpich) cmd="mpirun.mpich -n 2 build/bench-suite/mpich/wh_$b";;
   esac
   $cmd -m 8192:4194304 -i 1000 -x 100 -d malloc 2>&1 | grep -v "^#" | awk -v r=$rep -v b=$b -v c=$cfg '{print r, b, c, $1, $2}'
  done
 done
done
