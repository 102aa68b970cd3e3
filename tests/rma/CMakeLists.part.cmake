# One-sided communication: MPI-level tests of windows, operations and every
# synchronization mode on 1..8 ranks (odd sizes included), over every channel
# variant.  Included from tests/CMakeLists.txt.
foreach(np 1 2 3 4 8)
  wh_mpi_test(rma.basic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_basic.c ${np})
endforeach()
foreach(np 1 2 3 5 8)
  wh_mpi_test(rma.acc.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_acc.c ${np})
endforeach()
foreach(np 1 2 3 4 7)
  wh_mpi_test(rma.sync.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_sync.c ${np})
endforeach()
foreach(np 1 2 3 6)
  wh_mpi_test(rma.shared.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_shared.c ${np})
endforeach()
foreach(np 1 2 3 4)
  wh_mpi_test(rma.dynamic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_dynamic.c ${np})
endforeach()
