# Tests of the PMI wire parser, the PMI client and wharfrun.  Included from
# tests/CMakeLists.txt; paths are absolute so the include point does not matter.
set(WH_LAUNCHER_TESTS ${CMAKE_SOURCE_DIR}/tests/launcher)

# Parser unit tests.
add_executable(test_pmi_wire ${CMAKE_SOURCE_DIR}/tests/unit/test_pmi_wire.c)
target_link_libraries(test_pmi_wire PRIVATE wh_internal)
target_compile_options(test_pmi_wire PRIVATE ${WH_WARN})
add_test(NAME launcher.pmi_wire_unit COMMAND test_pmi_wire)
set_tests_properties(launcher.pmi_wire_unit PROPERTIES
  TIMEOUT 60 PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed")

# SHA-256 / HMAC-SHA256 of the PMI authentication (FIPS 180-4, RFC 4231).
wh_unit_test(sha256 ${CMAKE_SOURCE_DIR}/tests/unit/test_sha256.c)

# Deterministic fuzz campaign (200k inputs) over the parser and wharfrun's PMI
# server state machine; -DWH_LIBFUZZER + clang -fsanitize=fuzzer for libFuzzer.
add_executable(fuzz_pmi_wire
  ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_pmi_wire.c
  ${CMAKE_SOURCE_DIR}/tools/wharfrun/pmisrv.c
  ${CMAKE_SOURCE_DIR}/tools/wharfrun/util.c
  ${CMAKE_SOURCE_DIR}/src/pmi/wire.c
  ${CMAKE_SOURCE_DIR}/src/pmi/auth.c
  ${CMAKE_SOURCE_DIR}/src/util/sha256.c)
target_include_directories(fuzz_pmi_wire PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tools/wharfrun)
target_compile_options(fuzz_pmi_wire PRIVATE ${WH_WARN})
target_link_libraries(fuzz_pmi_wire PRIVATE OpenSSL::Crypto)
add_test(NAME launcher.pmi_wire_fuzz COMMAND fuzz_pmi_wire 200000 1)
set_tests_properties(launcher.pmi_wire_fuzz PROPERTIES TIMEOUT 300)

# A rank program built on the PMI client alone (no libmpi needed).
add_executable(launcher_pmi_test
  ${WH_LAUNCHER_TESTS}/pmi_test.c
  ${CMAKE_SOURCE_DIR}/src/pmi/client.c
  ${CMAKE_SOURCE_DIR}/src/pmi/wire.c
  ${CMAKE_SOURCE_DIR}/src/pmi/auth.c
  ${CMAKE_SOURCE_DIR}/src/util/sha256.c
  ${CMAKE_SOURCE_DIR}/src/util/log.c
  ${CMAKE_SOURCE_DIR}/src/util/tunables.c)
target_include_directories(launcher_pmi_test PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_compile_options(launcher_pmi_test PRIVATE ${WH_WARN})
target_link_libraries(launcher_pmi_test PRIVATE OpenSSL::Crypto)

# An MPI rank program (libmpi) for the attacker and fault cases.
add_executable(launcher_mpi_hold ${WH_LAUNCHER_TESTS}/mpi_hold.c)
add_dependencies(launcher_mpi_hold wh_headers)
target_include_directories(launcher_mpi_hold PRIVATE ${WH_INC})
target_link_libraries(launcher_mpi_hold PRIVATE mpi)
target_compile_options(launcher_mpi_hold PRIVATE ${WH_WARN})

# Shell-driven cases of tests/launcher/launcher_test.sh.
foreach(case basic singleton exitcode abort signal protocol tag_output output timeout
             sigterm badinput placement parent_pmi shm_cleanup remote hydra
             attacker listen region peerdie spawnfail mpmd stdin singleton_spawn)
  add_test(NAME launcher.${case}
    COMMAND sh ${WH_LAUNCHER_TESTS}/launcher_test.sh ${case}
            $<TARGET_FILE:wharfrun> $<TARGET_FILE:launcher_pmi_test>
            $<TARGET_FILE:launcher_mpi_hold>)
  set_tests_properties(launcher.${case} PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()
