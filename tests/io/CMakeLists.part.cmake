# MPI-IO (src/io): every channel variant, 1 to 4 ranks.
wh_mpi_test(io_basic_1 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 1)
wh_mpi_test(io_basic_2 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 2)
wh_mpi_test(io_basic_3 ${CMAKE_SOURCE_DIR}/tests/io/io_basic.c 3)
# In emulated containers and hosts (docs/SCENARIOS.md): /tmp is the shared file
# system of the containers, so the shared file pointer's fcntl lock and the
# ordered writes work across them.
wh_scenario_test(io_basic $<TARGET_FILE:mpit_io_basic> io "shared;isolated;twohost")
wh_mpi_test(io_view_rules ${CMAKE_SOURCE_DIR}/tests/io/io_view_rules.c 1)
wh_mpi_test(io_external32 ${CMAKE_SOURCE_DIR}/tests/io/io_external32.c 3)
