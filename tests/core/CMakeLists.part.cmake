wh_unit_test(tunables ${CMAKE_SOURCE_DIR}/tests/unit/test_tunables.c)
wh_unit_test(handle ${CMAKE_SOURCE_DIR}/tests/unit/test_handle.c)
wh_unit_test(match ${CMAKE_SOURCE_DIR}/tests/unit/test_match.c)
add_test(NAME docs.tunables COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/gen/sync_docs.py
         ${CMAKE_BINARY_DIR}/bin/wharf-info --check)
set_tests_properties(docs.tunables PROPERTIES LABELS unit)
# docs/UNIMPLEMENTED.md lists exactly the functions still served by weak stubs,
# and no function is half implemented (MPI_x strong but PMPI_x weak or missing).
add_test(NAME docs.unimplemented COMMAND sh -c
         "${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/gen/list-unimplemented --markdown $<TARGET_FILE:mpi> > unimplemented.md && diff -u ${CMAKE_SOURCE_DIR}/docs/UNIMPLEMENTED.md unimplemented.md")
set_tests_properties(docs.unimplemented PROPERTIES LABELS unit)
wh_unit_test(region ${CMAKE_SOURCE_DIR}/tests/unit/test_region.c)
