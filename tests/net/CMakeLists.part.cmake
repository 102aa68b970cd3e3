# The network channel (src/chan/net, docs/NET.md).  test_net drives the channel
# through its ops table in two forked ranks; it links only the channel,
# tunables and logging, and brings its own stand-ins for PMI (files), the
# protocol layer (requests, wh_proto_incoming) and the datatype engine.
# MPI-level tests over the channel run as the "net" variant of every
# wh_mpi_test (WHARF_CHANNEL=net) and in tests/scenarios.
file(GLOB WH_NET_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/chan/net/*.c)
add_executable(test_net ${CMAKE_SOURCE_DIR}/tests/unit/test_net.c ${WH_NET_SRC}
               ${CMAKE_SOURCE_DIR}/src/util/tunables.c ${CMAKE_SOURCE_DIR}/src/util/log.c)
add_dependencies(test_net wh_headers)
target_include_directories(test_net PRIVATE ${WH_INC} ${CMAKE_SOURCE_DIR}/src)
target_compile_options(test_net PRIVATE ${WH_WARN})
target_link_libraries(test_net PRIVATE PkgConfig::FABRIC)
set_target_properties(test_net PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)

# name : environment.  default: tcp;ofi_rxm.  queue: tiny pools and eager
# limit (WH_AGAIN, provider queue, many rendezvous).  reorder: eager messages
# beyond ofi_rxm's eager limit (SAR completes out of order; held and copied
# stashes).  sockets / shm: other providers chosen by name.
# (environment entries separated by "," here: ";" would split the list)
set(WH_NET_VARIANTS
  "default:WHARF_NET_PROVIDER=tcp"
  "queue:WHARF_NET_TX_BUFS=16,WHARF_NET_RX_BUFS=4,WHARF_NET_EAGER_MAX=1024"
  "reorder:WHARF_NET_EAGER_MAX=65536,WHARF_NET_RX_BUFS=8"
  "sockets:WHARF_NET_PROVIDER=sockets"
  "shm:WHARF_NET_PROVIDER=shm")
foreach(v ${WH_NET_VARIANTS})
  string(FIND "${v}" ":" colon)
  string(SUBSTRING "${v}" 0 ${colon} vname)
  math(EXPR colon "${colon} + 1")
  string(SUBSTRING "${v}" ${colon} -1 venv)
  string(REPLACE "," ";" venv "${venv}")
  add_test(NAME unit.net.${vname} COMMAND test_net)
  set_tests_properties(unit.net.${vname} PROPERTIES ENVIRONMENT "${venv}" TIMEOUT 300 LABELS "unit;net"
                       PROCESSORS 2)
endforeach()

# Two ranks in separate network namespaces joined by a veth pair (isolated
# containers); needs root and iproute2, skipped (77) otherwise.
add_test(NAME unit.net.netns COMMAND test_net --netns)
set_tests_properties(unit.net.netns PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS "unit;net;scenarios"
                     PROCESSORS 2)
