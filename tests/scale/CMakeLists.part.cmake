# Scale test (issue 13): 64 and 128 ranks on one host, bounded time; asserts
# completion, correct all-to-all data and the node-region budget
# (tests/scale/check_scale.py).
add_executable(scale_init ${CMAKE_SOURCE_DIR}/tests/scale/scale_init.c)
add_dependencies(scale_init wh_headers)
target_include_directories(scale_init PRIVATE ${WH_INC})
target_link_libraries(scale_init PRIVATE mpi)
target_compile_options(scale_init PRIVATE -Wall -Wextra)
set_target_properties(scale_init PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/scale)
add_test(NAME scale.ranks
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scale/check_scale.py --build ${CMAKE_BINARY_DIR} 64 128)
set_tests_properties(scale.ranks PROPERTIES LABELS scale RUN_SERIAL true TIMEOUT 600)
