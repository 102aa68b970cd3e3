# MPI_THREAD_MULTIPLE (issue 13): many threads per rank over every channel.
wh_mpi_test(thread_multi_2 ${CMAKE_SOURCE_DIR}/tests/mpi/thread_multi.c 2)
wh_mpi_test(thread_multi_4 ${CMAKE_SOURCE_DIR}/tests/mpi/thread_multi.c 4)
target_link_libraries(mpit_thread_multi PRIVATE Threads::Threads)
