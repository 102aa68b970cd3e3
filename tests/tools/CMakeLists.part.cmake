# The compiler wrappers and what build systems ask of them (tests/tools/).
add_test(NAME tools.wrappers COMMAND sh ${CMAKE_SOURCE_DIR}/tests/tools/wrappers_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(tools.wrappers PROPERTIES LABELS "nosan" TIMEOUT 120)
# A CMake project finds wharf with find_package(MPI) (C, C++, Fortran) and runs through the
# mpiexec FindMPI found.
add_test(NAME tools.findmpi COMMAND sh ${CMAKE_SOURCE_DIR}/tests/tools/findmpi_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(tools.findmpi PROPERTIES LABELS "nosan" TIMEOUT 300 SKIP_RETURN_CODE 77)
# `cmake --install` into a fresh prefix: what is installed, and that it works from there.
add_test(NAME tools.install COMMAND sh ${CMAKE_SOURCE_DIR}/tests/tools/install_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(tools.install PROPERTIES LABELS "nosan" TIMEOUT 300)
