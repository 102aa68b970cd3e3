# The API table (tools/gen/mpi_api.txt) and its parser (tools/gen/apitable.py):
# every parameter of every function resolves to a kind; spot checks of the tricky ones.
add_test(NAME unit.apitable COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/gen/test_apitable.py)
set_tests_properties(unit.apitable PROPERTIES TIMEOUT 60 LABELS "unit;nosan")
# The entry-point generator (genapi.py --entries-out) on synthetic bodies and on src/mpi.
add_test(NAME unit.genapi COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/gen/test_genapi.py)
set_tests_properties(unit.genapi PROPERTIES TIMEOUT 60 LABELS "unit;nosan")
