# Errors, communicators, groups, attributes, error handlers, info objects.
wh_unit_test(err ${CMAKE_SOURCE_DIR}/tests/unit/test_err.c)
target_include_directories(test_err PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)

foreach(np 2 3 4)
  wh_mpi_test(comm_basic_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/comm_basic.c ${np})
  wh_mpi_test(comm_create_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/comm_create.c ${np})
endforeach()
wh_mpi_test(comm_group_1 ${CMAKE_SOURCE_DIR}/tests/mpi/comm_group.c 1)
wh_mpi_test(comm_group_4 ${CMAKE_SOURCE_DIR}/tests/mpi/comm_group.c 4)
wh_mpi_test(comm_attr_2 ${CMAKE_SOURCE_DIR}/tests/mpi/comm_attr.c 2)
wh_mpi_test(comm_info_2 ${CMAKE_SOURCE_DIR}/tests/mpi/comm_info.c 2 hello)
wh_mpi_test(err_classes_2 ${CMAKE_SOURCE_DIR}/tests/mpi/err_classes.c 2)
wh_mpi_test(err_classes_3 ${CMAKE_SOURCE_DIR}/tests/mpi/err_classes.c 3)
wh_mpi_test(err_handlers_2 ${CMAKE_SOURCE_DIR}/tests/mpi/err_handlers.c 2)

# The fatal-error test: a program that is expected to fail, checked by a script.
add_executable(mpit_err_fatal ${CMAKE_SOURCE_DIR}/tests/mpi/err_fatal.c)
add_dependencies(mpit_err_fatal wh_headers)
target_include_directories(mpit_err_fatal PRIVATE ${WH_INC})
target_link_libraries(mpit_err_fatal PRIVATE mpi)
set_target_properties(mpit_err_fatal PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
add_test(NAME mpi.err_fatal COMMAND sh ${CMAKE_SOURCE_DIR}/tests/mpi/err_fatal.sh
         ${CMAKE_BINARY_DIR}/bin/wharfrun $<TARGET_FILE:mpit_err_fatal>)
set_tests_properties(mpi.err_fatal PROPERTIES TIMEOUT 240 LABELS mpi PROCESSORS 3)

# Communicator constructors, topologies and neighbourhood collectives (issues 7, 8, 15).
foreach(np 1 2 3 5 8)
  wh_mpi_test(comm_idup_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/comm_idup.c ${np})
endforeach()
foreach(np 1 2 3 6 8)
  wh_mpi_test(topo_cart_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/topo_cart.c ${np})
endforeach()
foreach(np 1 2 3 4 7)
  wh_mpi_test(topo_graph_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/topo_graph.c ${np})
  wh_mpi_test(topo_neighbor_${np} ${CMAKE_SOURCE_DIR}/tests/mpi/topo_neighbor.c ${np})
endforeach()
