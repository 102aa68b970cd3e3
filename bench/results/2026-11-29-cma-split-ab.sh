#!/bin/bash
# A/B of the split single copy (src/proto/split.c): wharf default vs WHARF_CMA_SPLIT=0 (the receiver
# copies alone, as before) vs Open MPI 4.1.4 and MPICH 4.0.2 (Debian), 2 ranks native, interleaved.
# usage: bash bench/results/2026-11-29-cma-split-ab.sh REPS OUTFILE   (suites built in /tmp/bsw, /tmp/bs-openmpi, /tmp/bs-mpich)
cd "$(dirname "$0")/../.."
reps=${1:-3}; out=${2:-/tmp/cma-split-ab.txt}; : > "$out"
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 2 "$@"; }
for r in $(seq 1 "$reps"); do
  for b in latency bw bibw; do
    args="-m 16384:4194304 -i 400 -x 40"
    echo "rep$r split $b $(build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $args 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "rep$r nosplit $b $(WHARF_CMA_SPLIT=0 build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $args 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "rep$r openmpi $b $(ompi /tmp/bs-openmpi/wh_$b $args 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "rep$r mpich $b $(mpirun.mpich -n 2 /tmp/bs-mpich/wh_$b $args 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
  done
done
cat "$out"
