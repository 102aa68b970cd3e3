# run from the wharf tree; /work/main = tree before, /tmp/bsm and /tmp/bsw = bench/suite built against each
OMPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 4"
for r in 1 2 3; do for b in scan exscan reduce_scatter barrier reduce allgather; do
  m=$(/work/main/build/bin/wharfrun -n 4 /tmp/bsm/wh_$b -m 8:8 -i 3000 2>&1 | awk '/^(0|8) /{print $2}')
  w=$(build/bin/wharfrun -n 4 /tmp/bsw/wh_$b -m 8:8 -i 3000 2>&1 | awk '/^(0|8) /{print $2}')
  o=$($OMPI /tmp/bs-openmpi/wh_$b -m 8:8 -i 3000 2>&1 | awk '/^(0|8) /{print $2}')
  echo "$r $b main=$m new=$w ompi=$o"; done; done
# 2 ranks: the same with -n 2, scan exscan reduce_scatter, -i 20000
