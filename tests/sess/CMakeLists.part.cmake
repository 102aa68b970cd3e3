# Sessions, partitioned point-to-point and the MPI-4.1 corners of issue 14.
foreach(n 1 2 3 4)
  wh_mpi_test(sess_basic_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/sess_basic.c ${n})
endforeach()
wh_mpi_test(sess_world_1 ${CMAKE_SOURCE_DIR}/tests/mpi/sess_world.c 1)
wh_mpi_test(sess_world_3 ${CMAKE_SOURCE_DIR}/tests/mpi/sess_world.c 3)
foreach(n 1 2 3 4)
  wh_mpi_test(part_basic_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/part_basic.c ${n})
endforeach()
foreach(n 1 2 4)
  wh_mpi_test(corners41_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/corners41.c ${n})
endforeach()
# honest absence: exports, link tests and calls against docs/UNIMPLEMENTED.md
add_test(NAME abi.feature_probe COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/sess/probe_features.py
         --cc ${CMAKE_C_COMPILER} --build ${CMAKE_BINARY_DIR} --src ${CMAKE_SOURCE_DIR})
set_tests_properties(abi.feature_probe PROPERTIES LABELS "unit;nosan" TIMEOUT 300)
foreach(n 2 4)
  wh_mpi_test(sess_part_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/sess_part.c ${n})
endforeach()
# the same in emulated containers (docs/SCENARIOS.md): one rank per container,
# and two hosts of two ranks
wh_scenario_test(sess_part $<TARGET_FILE:mpit_sess_part> sess "shared;isolated;twohost")
wh_mpi_test(part_stress_2 ${CMAKE_SOURCE_DIR}/tests/mpi/part_stress.c 2)
wh_mpi_test(part_stress_4 ${CMAKE_SOURCE_DIR}/tests/mpi/part_stress.c 4)
# what binaries built against MPICH hit (mpi4py's MPICH-ABI wheel)
foreach(n 1 2 3)
  wh_mpi_test(corners_abi_${n} ${CMAKE_SOURCE_DIR}/tests/mpi/corners_abi.c ${n})
endforeach()
