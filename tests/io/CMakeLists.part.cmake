# MPI-IO (src/io): every channel variant, 1 to 4 ranks.
wh_mpi_test(io_basic_1 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 1)
wh_mpi_test(io_basic_2 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 2)
wh_mpi_test(io_basic_3 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 3)
# In emulated containers and hosts (docs/SCENARIOS.md): /tmp is the shared file
# system of the containers, so the shared file pointer's fcntl lock and the
# ordered writes work across them.
foreach(sc shared isolated twohost)
  set(np 2)
  if(sc STREQUAL "twohost")
    set(np 4)
  endif()
  add_test(NAME scenarios.${sc}.io_basic
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scenarios/wharfns.py run ${sc} -n ${np}
            --wharfrun ${WHARFRUN} --timeout 150 -- $<TARGET_FILE:mpit_io_basic>)
  set_tests_properties(scenarios.${sc}.io_basic PROPERTIES
    SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 240)
endforeach()
