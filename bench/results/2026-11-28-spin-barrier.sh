OMPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 4"
for r in 1 2 3; do
 for b in barrier; do
  for m in release flat; do
   v=$(WHARF_COLL_SHM_BARRIER=$m build/bin/wharfrun -n 4 /tmp/bsw/wh_$b -m 8:8 -i 5000 2>&1 | awk '/^(0|8) /{print $2}')
   echo "$r $b wharf-$m $v"
  done
  v=$($OMPI /tmp/bs-openmpi/wh_$b -m 8:8 -i 5000 2>&1 | awk '/^(0|8) /{print $2}')
  echo "$r $b ompi $v"
 done
done
