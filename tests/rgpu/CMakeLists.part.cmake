# Remote GPUs (docs/RGPU.md): wharf-gpud + the client driver, tested against
# the emulated driver.
include(${CMAKE_SOURCE_DIR}/src/rgpu/rgpu.cmake)

if(WH_RGPU_OK)
  set(RGT ${CMAKE_SOURCE_DIR}/tests/rgpu)
  set(RGB ${CMAKE_BINARY_DIR}/tests/rgpu)
  # the test kernels: a module image in the emulator's convention
  add_library(rgpu_kernels MODULE ${RGT}/kernels.c)
  target_include_directories(rgpu_kernels PRIVATE ${CMAKE_SOURCE_DIR}/tests/cudaemu)
  target_compile_options(rgpu_kernels PRIVATE ${WH_WARN} -fvisibility=hidden)
  set_target_properties(rgpu_kernels PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${RGB})
  # test programs link no driver: they load whichever libcuda.so.1 LD_LIBRARY_PATH shows
  foreach(t forward app killsrv pipeline xwait peerfail peerchain)
    add_executable(rgpu_${t} ${RGT}/t_${t}.c)
    target_include_directories(rgpu_${t} SYSTEM PRIVATE ${WH_CUDA_INC})
    target_compile_options(rgpu_${t} PRIVATE ${WH_WARN})
    target_link_libraries(rgpu_${t} PRIVATE cudaemu)
    set_target_properties(rgpu_${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${RGB} SKIP_BUILD_RPATH ON)
    add_dependencies(rgpu_${t} rgpu_kernels wharf-gpud rgpu_client)
  endforeach()
endif()

if(WH_RGPU_OK)
  set(RGH ${Python3_EXECUTABLE} ${RGT}/rgpu_harness.py --build ${CMAKE_BINARY_DIR})
  set(RGMOD ${RGB}/rgpu_kernels.so)
  # every forwarded call through one server (loopback), two servers, and two
  # servers in their own network namespaces with the client in a third
  add_test(NAME rgpu.forward.one COMMAND ${RGH} --config --server 0,1 run -- $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # (the client's transport is libfabric, provider tcp, unless the test says --transport socket; the
  # server logs must show the sessions moved to it and the peer copies went over it)
  set(RGFAB --expect-log "moved to libfabric [(]tcp[)]" --expect-log "peer connection to .* over libfabric [(]tcp[)]")
  add_test(NAME rgpu.forward.two COMMAND ${RGH} ${RGFAB} --server 0,1 --server 2,3 run -- $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # the client's addresses never the servers': every address sent is translated
  add_test(NAME rgpu.forward.remap COMMAND ${RGH} --server 0,1 --server 2,3 run -- env WHARF_RGPU_REMAP=1
           $<TARGET_FILE:rgpu_forward> ${RGMOD})
  add_test(NAME rgpu.forward.ns COMMAND ${RGH} ${RGFAB} --ns --server 0 --server 3 run -- $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # the same over the TCP-socket transport (WHARF_RGPU_TRANSPORT=socket)
  add_test(NAME rgpu.forward.two.socket COMMAND ${RGH} --transport socket --server 0,1 --server 2,3 run --
           $<TARGET_FILE:rgpu_forward> ${RGMOD})
  add_test(NAME rgpu.forward.ns.socket COMMAND ${RGH} --transport socket --ns --server 0 --server 3 run --
           $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # a provider the servers do not have: the upgrade is refused and the client stays on the socket
  add_test(NAME rgpu.fabric.fallback COMMAND ${RGH} --provider no-such-provider --expect-log "stays on the socket"
           --server 0,1 --server 2,3 run -- env WHARF_RGPU_STATS=1 $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # device-memory registration (FI_HMEM): the tcp provider does not offer it; detected, reported by both
  # sides, and the small peer copies of the forward test (1, 7, 4099 bytes...) go the staged way
  add_test(NAME rgpu.fabric.hmem_fallback COMMAND ${RGH} --expect-log "FI_HMEM not offered: peer copies staged"
           --server 0,1 --server 2,3 run -- env WHARF_RGPU_STATS=1 $<TARGET_FILE:rgpu_forward> ${RGMOD})
  # the same test directly on the emulator (the reference)
  add_test(NAME rgpu.forward.local COMMAND $<TARGET_FILE:rgpu_forward> ${RGMOD})
  set_tests_properties(rgpu.forward.local PROPERTIES ENVIRONMENT "${WH_CUDAEMU_ENV}")
  # the application: the same answer on the emulator and through two servers in namespaces
  add_test(NAME rgpu.app.same COMMAND ${RGH} --server 0,1 --server 2,3 same -- $<TARGET_FILE:rgpu_app> ${RGMOD})
  add_test(NAME rgpu.app.ns COMMAND ${RGH} --ns --server 1 --server 2 same -- $<TARGET_FILE:rgpu_app> ${RGMOD})
  add_test(NAME rgpu.hostile COMMAND ${RGH} hostile)
  # a peer copy failing at the destination after the source sent it all; the next one reconnects
  add_test(NAME rgpu.peerfail COMMAND ${RGH} --server 0 --server 1 --expect-log "no ack of the last peer copy"
           run -- $<TARGET_FILE:rgpu_peerfail>)
  # (the servers inherit the fault injection from the harness)
  set_tests_properties(rgpu.peerfail PROPERTIES ENVIRONMENT "CUDAEMU_FAIL=cuMemcpyAsync@3"
    PASS_REGULAR_EXPRESSION "t_peerfail: ok" FAIL_REGULAR_EXPRESSION "check failed")
  add_test(NAME rgpu.hostile.ns COMMAND ${RGH} --ns hostile)
  add_test(NAME rgpu.killserver COMMAND ${RGH} --server 0 --server 1 killserver -- $<TARGET_FILE:rgpu_killsrv>)
  add_test(NAME rgpu.killserver.idle COMMAND ${RGH} --server 0 --server 1 killserver -- $<TARGET_FILE:rgpu_killsrv> idle)
  add_test(NAME rgpu.killserver.ns COMMAND ${RGH} --ns --server 0 --server 1 killserver -- $<TARGET_FILE:rgpu_killsrv>)
  add_test(NAME rgpu.killserver.socket COMMAND ${RGH} --transport socket --server 0 --server 1 killserver --
           $<TARGET_FILE:rgpu_killsrv>)
  add_test(NAME rgpu.killserver.idle.socket COMMAND ${RGH} --transport socket --server 0 --server 1 killserver --
           $<TARGET_FILE:rgpu_killsrv> idle)
  set(RG_FWD rgpu.forward.one rgpu.forward.two rgpu.forward.remap rgpu.forward.ns rgpu.forward.local
    rgpu.forward.two.socket rgpu.forward.ns.socket)
  set_tests_properties(${RG_FWD} rgpu.app.same rgpu.fabric.fallback rgpu.fabric.hmem_fallback
    rgpu.app.ns rgpu.hostile rgpu.hostile.ns rgpu.killserver rgpu.killserver.idle rgpu.killserver.ns
    rgpu.killserver.socket rgpu.killserver.idle.socket rgpu.peerfail PROPERTIES
    TIMEOUT 240 LABELS "rgpu;gpu" SKIP_RETURN_CODE 77)
  foreach(t ${RG_FWD})
    set_tests_properties(${t} PROPERTIES PASS_REGULAR_EXPRESSION "rgpu forward: ok" FAIL_REGULAR_EXPRESSION "check failed")
  endforeach()
  set_tests_properties(rgpu.fabric.fallback PROPERTIES FAIL_REGULAR_EXPRESSION "check failed"
    PASS_REGULAR_EXPRESSION "rgpu forward: ok[^\n]*\n(.*\n)*rgpu: server [^\n]*transport socket, FI_HMEM n/a")
  set_tests_properties(rgpu.fabric.hmem_fallback PROPERTIES FAIL_REGULAR_EXPRESSION "check failed"
    PASS_REGULAR_EXPRESSION "rgpu forward: ok[^\n]*\n(.*\n)*rgpu: server [^\n]*transport fabric [(]provider tcp[)], FI_HMEM not offered by the provider: peer copies staged")
  set_tests_properties(rgpu.forward.ns rgpu.forward.ns.socket rgpu.app.ns rgpu.hostile.ns rgpu.killserver.ns PROPERTIES
    RUN_SERIAL true LABELS "rgpu;gpu;scenarios")
endif()

if(WH_RGPU_OK)
  # deterministic fuzz campaign over the wire protocol's header check and request decoder
  add_executable(fuzz_rgpu_wire ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_rgpu_wire.c)
  target_compile_options(fuzz_rgpu_wire PRIVATE ${WH_WARN})
  target_link_libraries(fuzz_rgpu_wire PRIVATE rgpu_wire)
  set_target_properties(fuzz_rgpu_wire PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${RGB})
  add_test(NAME rgpu.wire_fuzz COMMAND fuzz_rgpu_wire 200000 1)
  set_tests_properties(rgpu.wire_fuzz PROPERTIES TIMEOUT 300 LABELS "rgpu;unit")
  # the pieces of a peer copy between servers tile it (src/rgpu/rg_plan.c)
  add_executable(rgpu_plan ${CMAKE_SOURCE_DIR}/tests/rgpu/t_plan.c)
  target_compile_options(rgpu_plan PRIVATE ${WH_WARN})
  target_link_libraries(rgpu_plan PRIVATE rgpu_wire)
  set_target_properties(rgpu_plan PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${RGB})
  add_test(NAME rgpu.plan COMMAND rgpu_plan)
  set_tests_properties(rgpu.plan PROPERTIES LABELS "rgpu;unit" PASS_REGULAR_EXPRESSION "rgpu plan: ok")
  # a wharf MPI program on device buffers, its driver the rgpu client (wharf
  # loads it through cuGetProcAddress; CUDA IPC is refused, so staged copies)
  add_test(NAME rgpu.mpi.gpu_p2p COMMAND ${RGH} --server 0,1 run -- env WHARF_CUDA=1
           ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(rgpu.mpi.gpu_p2p PROPERTIES TIMEOUT 240 LABELS "rgpu;gpu;mpi" PROCESSORS 2
    PASS_REGULAR_EXPRESSION "gpu p2p: ok" FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;wharfrun: rank")
endif()

if(WH_RGPU_OK)
  # cuStreamWaitEvent on another server's event without a host wait, the emulator's random stream
  # delays on (servers and the local reference): ordering, peer copies after the wait, other streams free
  add_test(NAME rgpu.xwait.local COMMAND $<TARGET_FILE:rgpu_xwait>)
  set_tests_properties(rgpu.xwait.local PROPERTIES ENVIRONMENT "${WH_CUDAEMU_ENV};CUDAEMU_STREAM_DELAY_US=3000")
  add_test(NAME rgpu.xwait COMMAND ${RGH} --expect-log "over libfabric" --server 0 --server 1 run -- $<TARGET_FILE:rgpu_xwait>)
  add_test(NAME rgpu.xwait.socket COMMAND ${RGH} --transport socket --server 0 --server 1 run -- $<TARGET_FILE:rgpu_xwait>)
  add_test(NAME rgpu.xwait.ns COMMAND ${RGH} --ns --server 0 --server 1 run -- $<TARGET_FILE:rgpu_xwait>)
  set_tests_properties(rgpu.xwait rgpu.xwait.socket rgpu.xwait.ns PROPERTIES ENVIRONMENT "CUDAEMU_STREAM_DELAY_US=3000")
  set_tests_properties(rgpu.xwait.local rgpu.xwait rgpu.xwait.socket rgpu.xwait.ns PROPERTIES TIMEOUT 240
    LABELS "rgpu;gpu" SKIP_RETURN_CODE 77 PASS_REGULAR_EXPRESSION "rgpu xwait: ok" FAIL_REGULAR_EXPRESSION "check failed")
  set_tests_properties(rgpu.xwait.ns PROPERTIES RUN_SERIAL true LABELS "rgpu;gpu;scenarios")

  # asynchronous peer copies back to back, other work between some, both directions, random
  # stream delays: the destination's early answer reorders nothing
  add_test(NAME rgpu.peerchain.local COMMAND $<TARGET_FILE:rgpu_peerchain>)
  set_tests_properties(rgpu.peerchain.local PROPERTIES ENVIRONMENT "${WH_CUDAEMU_ENV};CUDAEMU_STREAM_DELAY_US=2000")
  add_test(NAME rgpu.peerchain COMMAND ${RGH} --server 0 --server 1 run -- $<TARGET_FILE:rgpu_peerchain>)
  add_test(NAME rgpu.peerchain.socket COMMAND ${RGH} --transport socket --server 0 --server 1 run --
           $<TARGET_FILE:rgpu_peerchain>)
  set_tests_properties(rgpu.peerchain rgpu.peerchain.socket PROPERTIES ENVIRONMENT "CUDAEMU_STREAM_DELAY_US=2000")
  set_tests_properties(rgpu.peerchain.local rgpu.peerchain rgpu.peerchain.socket PROPERTIES TIMEOUT 240
    LABELS "rgpu;gpu" PASS_REGULAR_EXPRESSION "rgpu peerchain: ok" FAIL_REGULAR_EXPRESSION "check failed")

  # asynchronous calls pipelined: ~400 requests, only the setup's (11) and the
  # final synchronization's answers waited for (at most 19 accepted)
  add_test(NAME rgpu.pipeline COMMAND ${RGH} --server 0 run -- env WHARF_RGPU_STATS=1
           $<TARGET_FILE:rgpu_pipeline> ${RGMOD})
  set_tests_properties(rgpu.pipeline PROPERTIES TIMEOUT 240 LABELS "rgpu;gpu"
    PASS_REGULAR_EXPRESSION "rgpu pipeline: ok[^\n]*\n(.*\n)*rgpu: [4-9][0-9][0-9] requests, 1?[0-9] waited for"
    FAIL_REGULAR_EXPRESSION "check failed")
  add_test(NAME rgpu.pipeline.socket COMMAND ${RGH} --transport socket --server 0 run -- env WHARF_RGPU_STATS=1
           $<TARGET_FILE:rgpu_pipeline> ${RGMOD})
  set_tests_properties(rgpu.pipeline.socket PROPERTIES TIMEOUT 240 LABELS "rgpu;gpu"
    PASS_REGULAR_EXPRESSION "rgpu pipeline: ok[^\n]*\n(.*\n)*rgpu: [4-9][0-9][0-9] requests, 1?[0-9] waited for"
    FAIL_REGULAR_EXPRESSION "check failed")
endif()
