# external.mpich.*: MPICH 4.0.2's own test suite (test/mpi, ~800 C programs written by
# MPICH's developers) built with wharf's mpicc and run unchanged by MPICH's runtests driver
# with wharfrun as mpiexec (tests/external/mpich_suite.py, docs/TESTING.md).  The tarball
# is fetched once from Debian (SHA-256 checked) into $WHARF_CACHE_DIR or ~/.cache/wharf;
# without network the tests are skipped (77).  Expected failures, each with its reason:
# tests/external/mpich-xfail.txt.  One test per directory, each alone on the machine
# (PROCESSORS 2: the suite's programs run up to 10 ranks).
set(WH_MPICH_SUITE ${CMAKE_SOURCE_DIR}/tests/external/mpich_suite.py)
add_test(NAME external.mpich.setup
         COMMAND python3 ${WH_MPICH_SUITE} --build ${CMAKE_BINARY_DIR} --setup-only)
set_tests_properties(external.mpich.setup PROPERTIES
  FIXTURES_SETUP mpich_suite LABELS external TIMEOUT 600 SKIP_RETURN_CODE 77)
foreach(dir attr coll comm datatype errhan errors group info init io mpi_t part pt2pt rma spawn threads topo)
  add_test(NAME external.mpich.${dir}
           COMMAND python3 ${WH_MPICH_SUITE} --build ${CMAKE_BINARY_DIR} --dirs ${dir} --timeout 120)
  set_tests_properties(external.mpich.${dir} PROPERTIES
    FIXTURES_REQUIRED mpich_suite LABELS external TIMEOUT 2400 PROCESSORS 2 SKIP_RETURN_CODE 77)
endforeach()

# app.hpcc.*: the HPC Challenge benchmark (HPL, PTRANS, RandomAccess, FFT, STREAM, DGEMM,
# b_eff), an application written by others, built with wharf's mpicc against OpenBLAS and
# run with 4 ranks on a small problem in every container scenario; passes when every
# check HPCC makes passes (tests/external/hpcc.py).  Source fetched once from Debian
# (SHA-256 checked); skipped (77) without network.  Part of `make check`.
set(WH_HPCC ${CMAKE_SOURCE_DIR}/tests/external/hpcc.py)
add_test(NAME app.hpcc.build COMMAND python3 ${WH_HPCC} --build ${CMAKE_BINARY_DIR} --setup-only)
set_tests_properties(app.hpcc.build PROPERTIES
  FIXTURES_SETUP hpcc LABELS app TIMEOUT 900 PROCESSORS 2 SKIP_RETURN_CODE 77)
foreach(sc native shared pidpriv volume isolated twohost)
  add_test(NAME app.hpcc.${sc} COMMAND python3 ${WH_HPCC} --build ${CMAKE_BINARY_DIR} --scenario ${sc})
  set_tests_properties(app.hpcc.${sc} PROPERTIES
    FIXTURES_REQUIRED hpcc LABELS "app;scenario" TIMEOUT 900 PROCESSORS 2 SKIP_RETURN_CODE 77)
endforeach()
# The same application built with Debian's mpicc.mpich against MPICH's mpi.h, run unchanged on
# wharf's libmpi.so.12 (the ABI promise; every rank must print wharf's channel report).
add_test(NAME app.hpcc_mpich_abi.build COMMAND python3 ${WH_HPCC} --build ${CMAKE_BINARY_DIR} --abi mpich --setup-only)
set_tests_properties(app.hpcc_mpich_abi.build PROPERTIES
  FIXTURES_SETUP hpcc_mpich LABELS app TIMEOUT 900 PROCESSORS 2 SKIP_RETURN_CODE 77)
foreach(sc native pidpriv twohost)
  add_test(NAME app.hpcc_mpich_abi.${sc}
           COMMAND python3 ${WH_HPCC} --build ${CMAKE_BINARY_DIR} --abi mpich --scenario ${sc})
  set_tests_properties(app.hpcc_mpich_abi.${sc} PROPERTIES
    FIXTURES_REQUIRED hpcc_mpich LABELS "app;scenario" TIMEOUT 900 PROCESSORS 2 SKIP_RETURN_CODE 77)
endforeach()

# app.scalapack.*: Debian's ScaLAPACK test programs (scalapack-mpi-test: the BLACS tester with
# its C and Fortran interfaces, PBLAS testers, ScaLAPACK drivers), compiled by Debian against
# MPICH and run unchanged on wharf's libmpi.so.12 in every container scenario; passes when no
# program reports a failed check (tests/external/scalapack.py).  Skipped (77) without the package.
set(WH_SCALAPACK ${CMAKE_SOURCE_DIR}/tests/external/scalapack.py)
# Where ranks talk over TCP (isolated, twohost) a shorter list: the testers send ~10^5 small
# messages, minutes over TCP on 2 loaded cores.
foreach(sc native shared pidpriv volume isolated twohost)
  set(only)
  if(sc STREQUAL "isolated" OR sc STREQUAL "twohost")
    set(only --only xCbtest,dpb1tst,xzinv,xddblu)
  endif()
  add_test(NAME app.scalapack.${sc} COMMAND python3 ${WH_SCALAPACK} --build ${CMAKE_BINARY_DIR} --scenario ${sc} ${only})
  set_tests_properties(app.scalapack.${sc} PROPERTIES
    LABELS "app;scenario" TIMEOUT 1200 PROCESSORS 2 SKIP_RETURN_CODE 77)
endforeach()
