# Fortran tests (issue 10): programs compiled with wharf's own mpif90 and run with wharfrun over
# every channel variant; the ABI test runs programs built with Debian's mpif90.mpich on wharf.
# Without a Fortran compiler one test reports "skipped" (exit 77).
set(WH_FTEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# The C side of the Fortran support (f90 types, f08 status conversions): a C test, built with
# or without a Fortran compiler, and run under the sanitizers too.
wh_mpi_test(fortran_c_interop ${CMAKE_CURRENT_LIST_DIR}/c_interop.c 1)
if(NOT WH_FORTRAN)
  add_test(NAME fortran.skipped COMMAND sh -c "echo 'no Fortran compiler: Fortran bindings not built'; exit 77")
  set_tests_properties(fortran.skipped PROPERTIES SKIP_RETURN_CODE 77 LABELS "unit;fortran")
  return()
endif()

# wh_fortran_test(NAME SOURCE NPROCS): compile SOURCE with build/bin/mpif90 (in its own
# directory, for the .mod files of the program's modules) and run it over every channel.
# WH_FTEST_C_<base>: a C source compiled with mpicc and linked in (mixed-language tests).
function(wh_fortran_test NAME SOURCE NPROCS)  # [ARGS...] for the program
  get_filename_component(base ${SOURCE} NAME_WE)
  set(dir ${CMAKE_BINARY_DIR}/tests/fortran/${base}.d)
  set(exe ${CMAKE_BINARY_DIR}/tests/fortran/${base})
  file(MAKE_DIRECTORY ${dir})
  set(cobj)
  set(cdep)
  if(WH_FTEST_C_${base})
    set(cobj ${dir}/${base}_c.o)
    set(cdep ${WH_FTEST_DIR}/${WH_FTEST_C_${base}})
    add_custom_command(OUTPUT ${cobj}
      COMMAND ${CMAKE_BINARY_DIR}/bin/mpicc -O2 -c -o ${cobj} ${cdep}
      DEPENDS ${cdep} wh_headers)
  endif()
  add_custom_command(OUTPUT ${exe}
    COMMAND ${CMAKE_BINARY_DIR}/bin/mpif90 -g -O2 -o ${exe} ${WH_FTEST_DIR}/${SOURCE} ${cobj}
    WORKING_DIRECTORY ${dir}
    DEPENDS ${WH_FTEST_DIR}/${SOURCE} ${cobj} mpifort mpi ${CMAKE_SOURCE_DIR}/tools/mpiwrap.in
    COMMENT "Compiling ${SOURCE} with wharf's mpif90")
  add_custom_target(ftest_${base} ALL DEPENDS ${exe})
  set(WH_FTEST_EXE_${base} ${exe} PARENT_SCOPE)
  foreach(v ${WH_CHANNEL_VARIANTS})
    wh_variant("${v}")
    add_test(NAME fortran.${NAME}.${vname} COMMAND ${WHARFRUN} -n ${NPROCS} --timeout 150 ${exe} ${ARGN})
    # nosan: the program is linked without the sanitizers' runtime
    set_tests_properties(fortran.${NAME}.${vname} PROPERTIES ENVIRONMENT "${venv}"
      TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;fortran;${vname};nosan" PROCESSORS ${NPROCS})
  endforeach()
endfunction()

wh_fortran_test(f77_p2p f77_p2p.f 3)
wh_fortran_test(f90_coll f90_coll.f90 4)
wh_fortran_test(f90_coll2 f90_coll2.f90 4)
wh_fortran_test(f90_misc f90_misc.f90 4)
wh_fortran_test(f08_basic f08_basic.f90 3)
wh_fortran_test(f08_profile f08_profile.f90 2)
wh_fortran_test(f90_cg f90_cg.f90 4 600)
set(WH_FTEST_C_f90_mixed mixed_c.c)
wh_fortran_test(f90_mixed f90_mixed.f90 2)
set(WH_FTEST_C_f90_attrlang attrlang_c.c)
wh_fortran_test(f90_attrlang f90_attrlang.f90 2)
wh_fortran_test(f90_io f90_io.f90 3)
wh_fortran_test(f77_compat f77_compat.f 2)
wh_fortran_test(f90_spawn f90_spawn.f90 2)

# The CG application in every container scenario (tests/scenarios, docs/SCENARIOS.md): one
# rank per container (twohost: 4 ranks, two per host).  Needs root; 77 (skipped) otherwise.
wh_scenario_test(fortran_cg ${WH_FTEST_EXE_f90_cg} fortran "shared;pidpriv;volume;isolated;twohost" 400)

# The wrappers' -show / -compile-info / -link-info, and mpif.h valid in fixed and free form.
add_test(NAME fortran.wrappers COMMAND sh ${WH_FTEST_DIR}/wrappers_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(fortran.wrappers PROPERTIES TIMEOUT 120 LABELS "unit;fortran;nosan")

# MPICH's Fortran ABI: programs built with Debian's mpif90.mpich run on wharf's libraries
# through LD_LIBRARY_PATH; every mpif.h-level entry point of libmpichfort.so.12 exists in ours.
add_test(NAME fortran.abi_mpich COMMAND sh ${WH_FTEST_DIR}/abi_mpich.sh ${CMAKE_BINARY_DIR} ${WH_FTEST_DIR})
set_tests_properties(fortran.abi_mpich PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
  LABELS "mpi;fortran;nosan" PROCESSORS 3)
