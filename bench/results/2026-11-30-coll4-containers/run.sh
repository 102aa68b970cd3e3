#!/bin/sh
# Four ranks on two cores, wharf (and Open MPI natively): native and the container scenarios interleaved per
# repetition (one bench/run per scenario and repetition), so that each scenario's median
# is taken over the same stretch of machine time as native's.
#   sh bench/results/2026-11-30-coll4-containers/run.sh REPS SIZE ITERS WARMUP OUTDIR
set -e
REPS=${1:-5}; SIZE=${2:-1048576}; IT=${3:-200}; WU=${4:-20}; OUT=${5:-/tmp/coll4c}
BENCHES=barrier,bcast,reduce,allreduce,gather,allgather,scatter,alltoall
mkdir -p "$OUT"
for r in $(seq 1 "$REPS"); do
  for sc in native shared pidpriv volume; do
    MPIS=wharf; [ $sc = native ] && MPIS=wharf,openmpi
    python3 bench/run --mpi $MPIS --scenario $sc --bench $BENCHES --ranks 4 \
      --args "-m $SIZE:$SIZE -i $IT -x $WU" --reps 1 --json "$OUT/$sc.$r.json" > /dev/null 2>&1 || echo "rep $r $sc failed"
  done
done
python3 "$(dirname "$0")/sum.py" "$OUT"
