#!/bin/bash
# interleaved A/B: base vs new, 2 ranks 8 B, collectives that use wh_dtype_copy
B=allgather,allgatherv,gather,scatter,alltoall,bcast,allreduce
for r in 1 2 3 4 5; do
  for v in base new; do
    d=/tmp/wt-base; [ $v = new ] && d=/work/wt
    python3 /work/wt/bench/run --build $d/build --mpi wharf --scenario native --bench $B --ranks 2 --args "-m 8:8 -i 20000 -x 2000" --reps 1 --json /tmp/ab/$v-$r.json > /dev/null 2>&1
  done
done
