# Record of a run (2026-11-29): RG_RMAX was a temporary cap on the ramp of halvings at both ends
# of a peer copy (wharf-gpud), not kept in the tree (0 = no ramp, as kept); output: GB/s model,
# ramp, then bytes and direct MB/s pairs.
cd /work/wt
for rep in 1 2 3 4 5 6; do
 for g in 2 25; do
 for r in 0 2 4; do
  echo "$g $r $(RG_RMAX=$r CUDAEMU_D2H_GBPS=$g CUDAEMU_H2D_GBPS=$g timeout 300 python3 tests/rgpu/rgpu_harness.py --build build --server 0 --server 1 run -- build/bench/rgpu/rgpu_bench copy 16777216 2>&1 | awk '$1==1048576||$1==4194304||$1==16777216{printf "%s %s ", $1, $2}')"
 done; done
done
