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

# One application test per container scenario: app.NAME.<scenario> runs
# tests/external/NAME.py --scenario <scenario> with ARGS, or TCP_ARGS where ranks talk over
# TCP (isolated, twohost); skipped (77) without the Debian package or the scenario.
function(wh_app_test name)
  cmake_parse_arguments(A "" "TIMEOUT;PROCESSORS" "ARGS;TCP_ARGS" ${ARGN})
  foreach(sc native shared pidpriv volume isolated twohost)
    set(args ${A_ARGS})
    if(sc STREQUAL "isolated" OR sc STREQUAL "twohost")
      set(args ${A_TCP_ARGS})
    endif()
    add_test(NAME app.${name}.${sc} COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/external/${name}.py
             --build ${CMAKE_BINARY_DIR} --scenario ${sc} ${args})
    set_tests_properties(app.${name}.${sc} PROPERTIES LABELS "app;scenario" TIMEOUT ${A_TIMEOUT}
                         PROCESSORS ${A_PROCESSORS} SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

# app.scalapack.*: Debian's ScaLAPACK test programs (scalapack-mpi-test: the BLACS tester with
# its C and Fortran interfaces, PBLAS testers, ScaLAPACK drivers), compiled by Debian against
# MPICH and run unchanged on wharf's libmpi.so.12; passes when no program reports a failed check.
# Over TCP a shorter list: the testers send ~10^5 small messages, minutes on 2 loaded cores.
wh_app_test(scalapack TIMEOUT 1200 PROCESSORS 2 TCP_ARGS --only xCbtest,dpb1tst,xzinv,xddblu)
# app.coarrays.*: OpenCoarrays' test programs (libcoarrays-mpich-dev: Fortran coarray programs on
# OpenCoarrays' MPI-3 one-sided runtime, built by Debian against MPICH).  Over TCP the set
# leaves out two erroneous programs (they fail on MPICH over TCP too) and two slow ones.
wh_app_test(coarrays TIMEOUT 1200 PROCESSORS 2 ARGS --set all TCP_ARGS --set tcp)
# app.nwchem.*: NWChem (nwchem-mpich: Global Arrays over ARMCI-MPI, built by Debian against MPICH)
# computes a water SCF and DFT energy on 4 ranks; they must match a serial run's to 1e-6 hartree.
wh_app_test(nwchem TIMEOUT 900 PROCESSORS 2)
# app.bagel.*: BAGEL (bagel: distributed matrices and tensors in one-sided windows, built by Debian
# against MPICH): water HF, MP2, CASSCF, XMS-CASPT2 energies and two gradients must match a serial
# run's; also natively on 1 and 3 ranks (on 1 rank its CASPT2 once came out 0.15 hartree off).
wh_app_test(bagel TIMEOUT 600 PROCESSORS 2)
foreach(np 1 3)
  add_test(NAME app.bagel.native_np${np} COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/external/bagel.py
           --build ${CMAKE_BINARY_DIR} --scenario native -n ${np} --work ${CMAKE_BINARY_DIR}/bagel/np${np})
  set_tests_properties(app.bagel.native_np${np} PROPERTIES LABELS "app" TIMEOUT 600 PROCESSORS 2
                       SKIP_RETURN_CODE 77)
endforeach()
# app.hdf5.*: parallel HDF5 (Debian's build for MPICH) through wharf's MPI-IO: collective,
# independent and chunked-compressed datasets written by 4 ranks and read back by others
# (tests/external/hdf5_par.c).
wh_app_test(hdf5 TIMEOUT 600 PROCESSORS 1)
# app.yorick_mpy.*: Message Passing Yorick (yorick-mpy-mpich2: the yorick interpreter built by Debian
# against MPICH): upstream's testmp.i (ring exchanges, handout/handin, the worker pool) and our
# checks (probe order, fan-out sends, 8 MB ring, reductions) on 4 ranks; point-to-point only.
wh_app_test(yorick_mpy TIMEOUT 300 PROCESSORS 2)
# app.adios.*: ADIOS 1.13 (libadios-mpich-dev, built by Debian against MPICH): tests/external/adios_rw.c
# writes 3 steps of global arrays with the POSIX, MPI (MPI-IO) and MPI_AGGREGATE methods, reads
# them back in parallel and checks every value; Debian's bpls must list the expected shapes.
wh_app_test(adios TIMEOUT 300 PROCESSORS 2)
# app.mocassin.*: MOCASSIN (mocassin: Fortran 90 Monte Carlo photoionisation, mpif.h, built by Debian
# against MPICH) on a small HII20 benchmark, seeds fixed by a preload shim: mean T(H+) per
# iteration and H-beta must match MPICH's run of the same binary (allreduces of ~1.6 MB arrays).
wh_app_test(mocassin TIMEOUT 300 PROCESSORS 2)
# app.tachyon.*: Tachyon (libtachyon-mpich-0 in its plain, threads and OpenMP flavours, tachyon-nox;
# persistent requests, Startall/Testsome) renders images that must equal MPICH's byte for byte.
wh_app_test(tachyon TIMEOUT 300 PROCESSORS 2)
