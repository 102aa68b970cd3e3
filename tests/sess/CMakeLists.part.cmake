# Sessions, partitioned point-to-point and the MPI-4.1 corners of issue 14.
foreach(n 1 2 3 4)
  wh_mpi_test(sess_basic_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/sess_basic.c ${n})
endforeach()
wh_mpi_test(sess_world_1 ${CMAKE_SOURCE_DIR}/tests/mpi/sess_world.c 1)
wh_mpi_test(sess_world_3 ${CMAKE_SOURCE_DIR}/tests/mpi/sess_world.c 3)
foreach(n 1 2 3 4)
  wh_mpi_test(part_basic_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/part_basic.c ${n})
endforeach()
