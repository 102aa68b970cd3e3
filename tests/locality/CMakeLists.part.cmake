# Locality tests (issue 3; tests/locality/check_locality.py, docs/SCENARIOS.md
# "Locality tests"): per scenario (the wharfns ones, plus vms: two kernels
# sharing a volume) the locality report (groups, matrix,
# reasons), MPI_Comm_split_type(SHARED), the channel/protocol the traffic
# really took, and the p2p test programs; plus the fault cases (node
# directory missing/unwritable/full, fixed region file, concurrent jobs, ranks
# killed during init and while communicating).  Skip code 77 where Linux
# namespaces cannot be used.  The p2p programs (mpit_p2p_*) come from
# tests/p2p/CMakeLists.part.cmake; the script finds them in the build tree.
set(WH_LOC ${CMAKE_SOURCE_DIR}/tests/locality)

add_executable(loc_probe ${WH_LOC}/loc_probe.c)
add_dependencies(loc_probe wh_headers)
target_include_directories(loc_probe PRIVATE ${WH_INC})
target_link_libraries(loc_probe PRIVATE mpi)
target_compile_options(loc_probe PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(loc_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locality)

# LD_PRELOAD shim that SIGKILLs a rank at its K-th PMI barrier (faults).
add_library(loc_die MODULE ${WH_LOC}/loc_die.c)
target_link_libraries(loc_die PRIVATE ${CMAKE_DL_LIBS})
target_compile_options(loc_die PRIVATE -Wall -Wextra)
set_target_properties(loc_die PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locality)

foreach(sc native shared pidpriv volume isolated twohost vms)
  add_test(NAME locality.${sc}
    COMMAND ${Python3_EXECUTABLE} ${WH_LOC}/check_locality.py --build ${CMAKE_BINARY_DIR} scenario ${sc})
  set_tests_properties(locality.${sc} PROPERTIES
    SKIP_RETURN_CODE 77 LABELS "scenarios;locality" RUN_SERIAL true TIMEOUT 600)
endforeach()
add_test(NAME locality.faults
  COMMAND ${Python3_EXECUTABLE} ${WH_LOC}/check_locality.py --build ${CMAKE_BINARY_DIR} faults)
set_tests_properties(locality.faults PROPERTIES
  SKIP_RETURN_CODE 77 LABELS "scenarios;locality" RUN_SERIAL true TIMEOUT 600)
