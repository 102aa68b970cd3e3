wh_unit_test(tunables ${CMAKE_SOURCE_DIR}/tests/unit/test_tunables.c)
wh_unit_test(handle ${CMAKE_SOURCE_DIR}/tests/unit/test_handle.c)
wh_unit_test(match ${CMAKE_SOURCE_DIR}/tests/unit/test_match.c)
add_test(NAME docs.tunables COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/gen/sync_docs.py
         ${CMAKE_BINARY_DIR}/bin/wharf-info --check)
set_tests_properties(docs.tunables PROPERTIES LABELS unit)
