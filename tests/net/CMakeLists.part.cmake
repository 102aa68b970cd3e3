# The network channel (src/chan/net, docs/NET.md) is driven through its ops
# table by the channel conformance test (tests/chan), under several provider
# settings; MPI-level tests over the channel run as the "net" variant of every
# wh_mpi_test (WHARF_CHANNEL=net) and in tests/scenarios.

# Endpoint authentication (docs/NET.md, "Who may send"; docs/LAUNCHER.md): a
# process outside the job forges control messages, bulk chunks and RMA writes
# at rank 0's endpoint (net_forge); nothing is delivered, the job completes.
add_executable(net_forge ${CMAKE_SOURCE_DIR}/tests/net/net_forge.c)
target_include_directories(net_forge PRIVATE ${CMAKE_SOURCE_DIR}/src ${WH_INC})
target_link_libraries(net_forge PRIVATE PkgConfig::FABRIC)
target_compile_options(net_forge PRIVATE ${WH_WARN})
set_target_properties(net_forge PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/net)
add_executable(mpit_net_victim ${CMAKE_SOURCE_DIR}/tests/net/net_victim.c)
add_dependencies(mpit_net_victim wh_headers)
target_include_directories(mpit_net_victim PRIVATE ${WH_INC})
target_link_libraries(mpit_net_victim PRIVATE mpi)
target_compile_options(mpit_net_victim PRIVATE -Wall -Wextra)
set_target_properties(mpit_net_victim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/net)
add_test(NAME net.forge
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/net/forge_test.py ${WHARFRUN}
          $<TARGET_FILE:mpit_net_victim> $<TARGET_FILE:net_forge>)
set_tests_properties(net.forge PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "net" PROCESSORS 2)

# libfabric is loaded only where the network channel is opened (src/util/fabdl.c,
# docs/NET.md "Loading libfabric"): not by a singleton, nor by ranks that all share
# memory (native, the shared scenario), always where a peer is across the network.
wh_mpi_test(net.fabric_lazy ${CMAKE_SOURCE_DIR}/tests/mpi/fabric_lazy.c 3 auto)
add_test(NAME net.fabric_lazy.singleton COMMAND $<TARGET_FILE:mpit_fabric_lazy> no)
set_tests_properties(net.fabric_lazy.singleton PROPERTIES TIMEOUT 60 LABELS "net")
wh_scenario_test(fabric_lazy_local $<TARGET_FILE:mpit_fabric_lazy> "net" "shared;pidpriv;volume" no)
wh_scenario_test(fabric_lazy_remote $<TARGET_FILE:mpit_fabric_lazy> "net" "isolated;twohost" yes)

# Ranks whose network settings disagree (here ofi_rxm's eager limit, as on a rank that
# initialized libfabric before MPI_Init) fail at MPI_Init naming the ranks and the values,
# instead of hanging (docs/NET.md, "Send path").
add_test(NAME net.eager_mismatch
  COMMAND ${WHARFRUN} -n 2 --timeout 60 sh -c
          "if [ \"$WHARF_LOCAL_RANK\" = 1 ]; then export FI_OFI_RXM_EAGER_LIMIT=16384; fi; exec \"$0\" no"
          $<TARGET_FILE:mpit_fabric_lazy>)
set_tests_properties(net.eager_mismatch PROPERTIES ENVIRONMENT "WHARF_CHANNEL=net" TIMEOUT 90 LABELS "net"
  PASS_REGULAR_EXPRESSION "rank [01] sends control messages of up to [0-9]+ bytes [(]ofi_rxm eager limit [0-9]+[)], this rank [0-9]+ [(][0-9]+[)]: set WHARF_NET_EAGER_MAX and FI_OFI_RXM_EAGER_LIMIT alike")
# Deterministic fuzz campaign over the endpoint names ranks read from PMI (net_name.c);
# -DWH_LIBFUZZER + clang -fsanitize=fuzzer for libFuzzer.
add_executable(fuzz_net_name ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_net_name.c)
target_link_libraries(fuzz_net_name PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,wh_internal>")
target_compile_options(fuzz_net_name PRIVATE ${WH_WARN})
set_target_properties(fuzz_net_name PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)
add_test(NAME net.name_fuzz COMMAND fuzz_net_name 200000 1)
set_tests_properties(net.name_fuzz PROPERTIES TIMEOUT 300 LABELS "unit;net")
