# against the full-export compatibility library: libmpi.so.12 itself leaves the
# unimplemented functions out (docs/UNIMPLEMENTED_POLICY.md; checked by abi.feature_probe)
add_test(NAME abi.constants COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/abi/check_constants.py --lib $<TARGET_FILE:mpi_compat>)
# (not under the sanitizers: the probe program is linked without them)
set_tests_properties(abi.constants PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;nosan")
# The exported MPI_/PMPI_ symbol set does not change by accident (generated entry points).
add_test(NAME abi.exports COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/abi/check_exports.py
         --lib $<TARGET_FILE:mpi> --expect ${CMAKE_SOURCE_DIR}/tests/abi/exported_symbols.txt)
set_tests_properties(abi.exports PROPERTIES LABELS "unit;nosan" TIMEOUT 60)
# A Debian binary built against MPICH (NetPIPE, netpipe-mpich2) runs on wharf unchanged.
add_test(NAME abi.netpipe_mpich COMMAND sh ${CMAKE_SOURCE_DIR}/tests/abi/netpipe_mpich.sh ${CMAKE_BINARY_DIR})
set_tests_properties(abi.netpipe_mpich PROPERTIES LABELS "nosan" TIMEOUT 180 PROCESSORS 2 SKIP_RETURN_CODE 77)
