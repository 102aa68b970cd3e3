# Conformance corners found by an established MPI test suite (issue 15).
wh_mpi_test(conf_requests_2 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_requests.c 2)
wh_mpi_test(conf_errclass_1 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_errclass.c 1)
wh_mpi_test(conf_attr_2 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_attr.c 2)
wh_mpi_test(conf_names_1 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_names.c 1)
wh_mpi_test(conf_info_env_2 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_info_env.c 2 a b)
wh_mpi_test(conf_bsend_2 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_bsend.c 2)
wh_mpi_test(conf_external32_1 ${CMAKE_SOURCE_DIR}/tests/mpi/conf_external32.c 1)
wh_mpi_test(conf_greq_2 ${CMAKE_SOURCE_DIR}/tests/mpi/greq.c 2)
