# MPI_THREAD_MULTIPLE (issue 13): many threads per rank over every channel.
# Label "thread": `make check-tsan` runs these under ThreadSanitizer.
wh_mpi_test(thread_multi_2 ${CMAKE_SOURCE_DIR}/tests/mpi/thread_multi.c 2)
wh_mpi_test(thread_multi_4 ${CMAKE_SOURCE_DIR}/tests/mpi/thread_multi.c 4)
target_link_libraries(mpit_thread_multi PRIVATE Threads::Threads)
wh_mpi_test(thread_stress_2 ${CMAKE_SOURCE_DIR}/tests/thread/thread_stress.c 2)
wh_mpi_test(thread_stress_3 ${CMAKE_SOURCE_DIR}/tests/thread/thread_stress.c 3)
target_link_libraries(mpit_thread_stress PRIVATE Threads::Threads)
foreach(t thread_multi_2 thread_multi_4 thread_stress_2 thread_stress_3)
  foreach(v ${WH_CHANNEL_VARIANTS})
    string(REGEX REPLACE ":.*" "" vname "${v}")
    set_property(TEST mpi.${t}.${vname} APPEND PROPERTY LABELS thread)
  endforeach()
endforeach()
