#!/bin/bash
# interleaved A/B of the remote-GPU peer copy: base (b403048 servers and client driver) vs new,
# the same (new) bench binary, 2 GB/s device model, two servers on loopback
export CUDAEMU_D2H_GBPS=2 CUDAEMU_H2D_GBPS=2
for r in $(seq 1 ${REPS:-5}); do
  for v in base new; do
    d=/tmp/wt-base; [ $v = new ] && d=/work/wt
    timeout 300 python3 /work/wt/tests/rgpu/rgpu_harness.py --build $d/build --server 0 --server 1 run -- \
      /work/wt/build/bench/rgpu/rgpu_bench copy 67108864 > /tmp/rab/$v-$r.txt 2>&1
  done
done
