add_test(NAME abi.constants COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/abi/check_constants.py --lib $<TARGET_FILE:mpi>)
# (not under the sanitizers: the probe program is linked without them)
set_tests_properties(abi.constants PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;nosan")
# The exported MPI_/PMPI_ symbol set does not change by accident (generated entry points).
add_test(NAME abi.exports COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/abi/check_exports.py
         --lib $<TARGET_FILE:mpi> --expect ${CMAKE_SOURCE_DIR}/tests/abi/exported_symbols.txt)
set_tests_properties(abi.exports PROPERTIES LABELS "unit;nosan" TIMEOUT 60)
