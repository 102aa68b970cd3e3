# Datatype engine: unit test (reference type maps, random nested types) and
# MPI-level tests of derived types over every channel.
wh_unit_test(dtype ${CMAKE_SOURCE_DIR}/tests/unit/test_dtype.c)
wh_mpi_test(dtype_vector ${CMAKE_SOURCE_DIR}/tests/mpi/dtype_vector.c 2)
wh_mpi_test(dtype_struct ${CMAKE_SOURCE_DIR}/tests/mpi/dtype_struct.c 2)
wh_mpi_test(dtype_subarray ${CMAKE_SOURCE_DIR}/tests/mpi/dtype_subarray.c 2)
