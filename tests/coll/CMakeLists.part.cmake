# Reduction operations and collectives: unit tests of src/op and MPI-level
# tests of every collective on 2, 3, 4 and 8 ranks (non-powers of two
# included).  Included from tests/CMakeLists.txt.
wh_unit_test(op ${CMAKE_SOURCE_DIR}/tests/unit/test_op.c)
foreach(np 2 3 4 8)
  wh_mpi_test(coll.basic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_basic.c ${np})
endforeach()
foreach(np 2 3 4 8)
  wh_mpi_test(coll.alltoall.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_alltoall.c ${np})
endforeach()
foreach(np 2 3 4 8)
  wh_mpi_test(coll.reduce.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_reduce.c ${np})
endforeach()
foreach(np 2 3 4 8)
  wh_mpi_test(coll.errors.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_errors.c ${np})
endforeach()
# Nonblocking and persistent collectives (schedules, src/coll/sched*.c): one
# program, run as MPI_I* and as MPI_*_init + MPI_Start ("persist").
foreach(np 1 2 3 4 5 8)
  wh_mpi_test(coll.nbc.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc.c ${np})
  wh_mpi_test(coll.persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc.c ${np} persist)
endforeach()
foreach(np 2 3 5)
  wh_mpi_test(coll.nbc_progress.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc_progress.c ${np})
endforeach()
# Op/type pairs MPICH accepts beyond the standard (src/op), in real reductions.
foreach(np 1 3 8)
  wh_mpi_test(coll.ops_mpich.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_ops_mpich.c ${np})
endforeach()
foreach(np 1 3 4)
  wh_mpi_test(coll.nbc_errors.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc_errors.c ${np})
endforeach()
# Nonblocking and persistent neighbourhood collectives (schedules with per-step
# tag offsets): periodic grids with dimensions of size 1 and 2, borders, graph,
# weighted distributed graph.
foreach(np 1 2 3 4 5 6 7 8)
  wh_mpi_test(coll.nbr_nb.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbr_nb.c ${np})
  wh_mpi_test(coll.nbr_persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbr_nb.c ${np} persist)
endforeach()
# Intercommunicator collectives (src/coll/inter.c), blocking, nonblocking and
# persistent, over groups of unequal sizes.
foreach(np 2 3 4 5 7 8)
  wh_mpi_test(coll.inter.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np})
  wh_mpi_test(coll.inter_nb.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np} nb)
  wh_mpi_test(coll.inter_persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np} persist)
endforeach()

# node-shared-memory collectives (and their fallbacks over the net variant)
foreach(np 2 3 4 5 8)
  wh_mpi_test(coll.shm.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c ${np})
endforeach()
