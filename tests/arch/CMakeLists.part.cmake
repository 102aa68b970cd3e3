# The architecture's contracts: the node-shared allocator, the coordinator as
# a pure function, the include directions between layers, and the channel
# conformance test driven through every channel's ops table.
wh_unit_test(nodeheap ${CMAKE_SOURCE_DIR}/tests/unit/test_nodeheap.c)
wh_unit_test(coord ${CMAKE_SOURCE_DIR}/tests/unit/test_coord.c)
add_test(NAME arch.layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/check_layers.py ${CMAKE_SOURCE_DIR}/src)
set_tests_properties(arch.layers PROPERTIES LABELS unit TIMEOUT 60)
