# bench.smoke: the portable benchmark suite (bench/suite) built with wharf's
# compiler wrapper and run briefly under wharfrun: every benchmark with 2 ranks
# (one-sided with -s fence and -s lock), collectives also with 3, tiny sizes
# (-m 1:1024 -i 10 -x 2) and validation (-c).  A run passes when it exits 0 and
# prints data rows; a one-sided benchmark may instead print
# "# SKIPPED: one-sided communication not available" (a library without RMA).
# Needs make and sh; the suite is rebuilt into a temporary directory each time.
add_test(NAME bench.smoke
         COMMAND sh ${CMAKE_SOURCE_DIR}/bench/suite/smoke.sh
                 ${CMAKE_BINARY_DIR}/bin/mpicc ${CMAKE_BINARY_DIR}/bin/wharfrun --timeout 60 -n)
set_tests_properties(bench.smoke PROPERTIES
  LABELS bench
  TIMEOUT 300
  PROCESSORS 2
  ENVIRONMENT "SMOKE_TIMEOUT=90")

# bench.runner_smoke: the runner and the report never rot.  `bench/run --smoke`
# builds the suite with wharf's mpicc and runs every benchmark briefly with
# wharf natively (and in the `shared` namespace scenario when root), then
# `bench/report` turns the results into plots and a PERFORMANCE.md in a
# directory of the build tree (docs/ is not touched).  Speed is not judged.
# Exit 77 (skipped): no make, or no matplotlib for the report.
set(WH_BENCH_SMOKE_DIR ${CMAKE_BINARY_DIR}/bench-runner-smoke)
add_test(NAME bench.runner_smoke
  COMMAND sh -c "rm -rf \"$3\" && mkdir -p \"$3\" && \"$0\" \"$1/bench/run\" --smoke --build \"$2\" --json \"$3/results.json\" && \"$0\" \"$1/bench/report\" --results \"$3/results.json\" --out \"$3/report\""
          ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${WH_BENCH_SMOKE_DIR})
set_tests_properties(bench.runner_smoke PROPERTIES
  LABELS bench
  RUN_SERIAL true
  TIMEOUT 600
  SKIP_RETURN_CODE 77)
