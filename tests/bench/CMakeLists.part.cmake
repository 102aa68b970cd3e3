# bench.smoke: the portable benchmark suite (bench/suite) built with wharf's
# compiler wrapper and run briefly under wharfrun: every benchmark with 2 ranks
# (one-sided with -s fence and -s lock), collectives also with 3, tiny sizes
# (-m 1:1024 -i 10 -x 2) and validation (-c).  A run passes when it exits 0 and
# prints data rows; a one-sided benchmark may instead print
# "# SKIPPED: one-sided communication not available" (wharf has no RMA yet).
# Needs make and sh; the suite is rebuilt into a temporary directory each time.
add_test(NAME bench.smoke
         COMMAND sh ${CMAKE_SOURCE_DIR}/bench/suite/smoke.sh
                 ${CMAKE_BINARY_DIR}/bin/mpicc ${CMAKE_BINARY_DIR}/bin/wharfrun --timeout 60 -n)
set_tests_properties(bench.smoke PROPERTIES
  LABELS bench
  TIMEOUT 300
  PROCESSORS 2
  ENVIRONMENT "SMOKE_TIMEOUT=90")
