# One-sided communication: MPI-level tests of windows, operations and every
# synchronization mode on 1..8 ranks (odd sizes included), over every channel
# variant.  Included from tests/CMakeLists.txt.
foreach(np 1 2 3 4 8)
  wh_mpi_test(rma.basic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_basic.c ${np})
endforeach()
foreach(np 1 2 3 5 8)
  wh_mpi_test(rma.acc.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_acc.c ${np})
endforeach()
foreach(np 1 2 3 4 7)
  wh_mpi_test(rma.sync.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_sync.c ${np})
endforeach()
foreach(np 1 2 3 6)
  wh_mpi_test(rma.shared.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_shared.c ${np})
endforeach()
foreach(np 1 2 3 4)
  wh_mpi_test(rma.dynamic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_dynamic.c ${np})
endforeach()
foreach(np 1 2 4 8)
  wh_mpi_test(rma.atomic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_atomic.c ${np})
endforeach()
foreach(np 2 3)
  wh_mpi_test(rma.async.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_async.c ${np})
endforeach()
wh_mpi_test(rma.atomic_lock.np3 ${CMAKE_SOURCE_DIR}/tests/mpi/rma_atomic.c 3 lock)
foreach(np 1 2 4)
  wh_mpi_test(rma.churn.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_churn.c ${np})
endforeach()
foreach(np 1 2 3)
  wh_mpi_test(rma.order.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_order.c ${np})
endforeach()
foreach(np 1 2 3)
  wh_mpi_test(rma.errors.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_errors.c ${np})
endforeach()

# The same programs in every container scenario of tests/scenarios (one rank
# per container; twohost: 4 ranks on two emulated hosts, so shared windows
# exist only per host and MPI_Win_allocate_shared over the world fails with
# MPI_ERR_RMA_SHARED).  Skipped (77) without root.
foreach(t rma_acc rma_sync rma_shared rma_atomic rma_async rma_fabric rma_gate rma_order rma_churn)
  foreach(sc shared pidpriv volume isolated twohost)
    set(np 2)
    if(sc STREQUAL "twohost")
      set(np 4)
    endif()
    add_test(NAME scenarios.${sc}.${t}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scenarios/wharfns.py run ${sc} -n ${np}
              --wharfrun ${WHARFRUN} --timeout 150 -- $<TARGET_FILE:mpit_${t}>)
    set_tests_properties(scenarios.${sc}.${t} PROPERTIES
      SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 240)
  endforeach()
endforeach()

# libfabric RMA (src/chan/net/net_rma.c) for every contiguous put and get,
# however small: the network channel only, WHARF_NET_RMA_MIN=1.
foreach(t rma_basic rma_sync rma_async rma_atomic rma_dynamic rma_acc rma_order)
  add_test(NAME mpi.rma.fabric.${t} COMMAND ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_${t}>)
  set_tests_properties(mpi.rma.fabric.${t} PROPERTIES ENVIRONMENT "WHARF_CHANNEL=net;WHARF_NET_RMA_MIN=1"
                       TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 3)
endforeach()

# libfabric atomics and non-contiguous libfabric RMA (src/rma/fabric.c): the
# program over every channel, then the network channel forced onto each path
# by tunables, with WHARF_REPORT=channels showing which one was taken.
foreach(np 2 3)
  wh_mpi_test(rma.fabric_ops.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_fabric.c ${np})
endforeach()
set(WH_EXPECT ${CMAKE_SOURCE_DIR}/tests/rma/expect_path.sh)
add_test(NAME mpi.rma.path.fabric_atomic
  COMMAND ${WH_EXPECT} "+net/fabric-atomic" "+net/fabric-rma" "+rma_fabric: ok" --
          ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_rma_fabric>)
set_tests_properties(mpi.rma.path.fabric_atomic PROPERTIES
  ENVIRONMENT "WHARF_CHANNEL=net;WHARF_NET_RMA_MIN=1;WHARF_REPORT=channels"
  TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 3)
add_test(NAME mpi.rma.path.net_am
  COMMAND ${WH_EXPECT} "-fabric-atomic" "-fabric-rma" "+net/am" "+rma_fabric: ok" --
          ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_rma_fabric>)
set_tests_properties(mpi.rma.path.net_am PROPERTIES
  ENVIRONMENT "WHARF_CHANNEL=net;WHARF_NET_ATOMICS=0;WHARF_NET_RMA=0;WHARF_REPORT=channels"
  TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 3)
# atomics on, libfabric RMA only from its default size: small strided puts stay active messages
add_test(NAME mpi.rma.path.atomic_only
  COMMAND ${WH_EXPECT} "+net/fabric-atomic" "-fabric-rma" "+rma_fabric: ok" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_fabric>)
set_tests_properties(mpi.rma.path.atomic_only PROPERTIES
  ENVIRONMENT "WHARF_CHANNEL=net;WHARF_REPORT=channels"
  TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 2)
foreach(t rma_acc rma_fabric)
  add_test(NAME mpi.rma.fabric.${t}.noatomics COMMAND ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_${t}>)
  set_tests_properties(mpi.rma.fabric.${t}.noatomics PROPERTIES
    ENVIRONMENT "WHARF_CHANNEL=net;WHARF_NET_RMA_MIN=1;WHARF_NET_ATOMICS=0" TIMEOUT ${WH_TEST_TIMEOUT}
    LABELS "mpi;net" PROCESSORS 3)
endforeach()

# A 64 MiB-per-rank MPI_Win_allocate window among co-residents lies in the
# node region (WHARF_NODE_HEAP), so 4 MiB puts/gets are load/store, not CMA.
wh_mpi_test(rma.bigwin ${CMAKE_SOURCE_DIR}/tests/mpi/rma_bigwin.c 2)
add_test(NAME mpi.rma.path.bigwin_ldst
  COMMAND ${WH_EXPECT} "+shm/load-store" "-shm/cma" "+rma_bigwin: ok" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_bigwin>)
set_tests_properties(mpi.rma.path.bigwin_ldst PROPERTIES ENVIRONMENT "WHARF_REPORT=channels"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)

# Regressions found by MPICH's test suite (rma/): a rank spinning on its own
# memory with lock/unlock or flush still serves the others.
foreach(np 2 4)
  wh_mpi_test(rma.selfpoll.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_selfpoll.c ${np})
endforeach()
# Large integer accumulates on node-region windows: one plain pass under the
# exclusive lock word, small ones CPU atomics under the shared one, no update
# lost in the mix (MPICH's rma/large_acc_flush_local).
foreach(np 2 4)
  wh_mpi_test(rma.accbulk.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_accbulk.c ${np})
endforeach()
add_test(NAME mpi.rma.path.accbulk
  COMMAND ${WH_EXPECT} "+shm/acc-locked" "+shm/atomic" "+rma_accbulk: OK" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_accbulk>)
set_tests_properties(mpi.rma.path.accbulk PROPERTIES ENVIRONMENT "WHARF_REPORT=channels"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)
# The bulk gate (src/rma/atomic.c): CPU atomics skip the lock word unless a
# bulk accumulate is in flight.  Atomics from every rank against bulk passes
# on the same elements, exact totals; with the gate (default, the log must say
# the window uses it) and without it (WHARF_RMA_ACC_GATE=0: the shared lock
# word), and rma_accbulk without it.
foreach(np 2 4)
  wh_mpi_test(rma.gate.np${np} ${CMAKE_SOURCE_DIR}/tests/rma/rma_gate.c ${np})
endforeach()
add_test(NAME mpi.rma.path.gate
  COMMAND ${WH_EXPECT} "+CPU atomics through the bulk gate" "-CPU atomics holding" "+rma_gate: OK" --
          ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_rma_gate>)
set_tests_properties(mpi.rma.path.gate PROPERTIES ENVIRONMENT "WHARF_LOG=debug"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 3)
add_test(NAME mpi.rma.path.nogate
  COMMAND ${WH_EXPECT} "+CPU atomics holding the lock word shared" "-through the bulk gate" "+rma_gate: OK" --
          ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_rma_gate>)
set_tests_properties(mpi.rma.path.nogate PROPERTIES ENVIRONMENT "WHARF_LOG=debug;WHARF_RMA_ACC_GATE=0"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 3)
add_test(NAME mpi.rma.accbulk_nogate.np4 COMMAND ${WHARFRUN} -n 4 --timeout 150 $<TARGET_FILE:mpit_rma_accbulk>)
set_tests_properties(mpi.rma.accbulk_nogate.np4 PROPERTIES ENVIRONMENT "WHARF_RMA_ACC_GATE=0"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 4)
# Large contiguous puts and gets copied with streaming stores (src/rma/ops.c,
# WHARF_RMA_STREAM_MIN): misaligned heads and tails, untouched neighbours.
foreach(np 1 2 3)
  wh_mpi_test(rma.stream.np${np} ${CMAKE_SOURCE_DIR}/tests/rma/rma_stream.c ${np})
endforeach()
# the same with the body in one stream, in 3 (a remainder of lines), in 16
# (the most), and every copy streamed (WHARF_RMA_STREAM_MIN=1)
foreach(w 1 3 16)
  add_test(NAME mpi.rma.stream.ways${w} COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_stream>)
  set_tests_properties(mpi.rma.stream.ways${w} PROPERTIES ENVIRONMENT "WHARF_RMA_STREAM_WAYS=${w}"
                       TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)
endforeach()
add_test(NAME mpi.rma.stream.all COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_stream>)
set_tests_properties(mpi.rma.stream.all PROPERTIES ENVIRONMENT "WHARF_RMA_STREAM_MIN=1;WHARF_RMA_STREAM_WAYS=5"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)
# MPI_Alloc_mem blocks beyond the old 8 MiB limit in the node heap (src/rma/win.c,
# WHARF_ALLOC_MEM_NODE): bench/suite's wh_put_bw shape is load/store; with the
# limit forced down, or the heap exhausted by MPI_Win_allocate windows
# (WHARF_NODE_HEAP=64m), MPI_Alloc_mem falls back to malloc and the same
# puts and gets go through CMA; every byte checked in each case.
foreach(np 2 3)
  wh_mpi_test(rma.allocmem.np${np} ${CMAKE_SOURCE_DIR}/tests/rma/rma_allocmem.c ${np})
endforeach()
add_test(NAME mpi.rma.path.allocmem_ldst
  COMMAND ${WH_EXPECT} "+shm/load-store" "-shm/cma" "+rma_allocmem: ok" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_allocmem>)
set_tests_properties(mpi.rma.path.allocmem_ldst PROPERTIES ENVIRONMENT "WHARF_REPORT=channels"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)
add_test(NAME mpi.rma.path.allocmem_cap
  COMMAND ${WH_EXPECT} "+shm/cma" "-shm/load-store" "+rma_allocmem: ok" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_allocmem>)
set_tests_properties(mpi.rma.path.allocmem_cap PROPERTIES
                     ENVIRONMENT "WHARF_REPORT=channels;WHARF_ALLOC_MEM_NODE=8m"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)
add_test(NAME mpi.rma.path.allocmem_full
  COMMAND ${WH_EXPECT} "+shm/cma" "-shm/load-store" "+node heap said no" "+rma_allocmem: ok" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_allocmem>)
set_tests_properties(mpi.rma.path.allocmem_full PROPERTIES
                     ENVIRONMENT "WHARF_REPORT=channels;WHARF_LOG=debug;WHARF_NODE_HEAP=64m"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2)

# Synchronization requests riding on operations (src/rma/msg.c, WHARF_RMA_HOLD_MAX): the
# program counts them with MPI_T (wharf_*_rma_sync_msgs / _merged_msgs) and checks the
# exact number per phase (put + flush: one merged request; get + flush: none); "nohold"
# with the hold off expects every request as a message of its own.  Also in the network
# scenarios (isolated: TCP between two containers; twohost: shm within, TCP across hosts).
foreach(np 2 3)
  wh_mpi_test(rma.syncmsg.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/rma_syncmsg.c ${np})
endforeach()
add_test(NAME mpi.rma.path.syncmsg_nohold COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_syncmsg> nohold)
set_tests_properties(mpi.rma.path.syncmsg_nohold PROPERTIES ENVIRONMENT "WHARF_CHANNEL=net;WHARF_RMA_HOLD_MAX=0"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 2)
add_test(NAME mpi.rma.path.syncmsg_report
  COMMAND ${WH_EXPECT} "+net/rma-sync-merged" "+rma_syncmsg: OK" --
          ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_rma_syncmsg>)
set_tests_properties(mpi.rma.path.syncmsg_report PROPERTIES ENVIRONMENT "WHARF_CHANNEL=net;WHARF_REPORT=channels"
                     TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;net" PROCESSORS 2)
wh_scenario_test(rma_syncmsg $<TARGET_FILE:mpit_rma_syncmsg> "rma" "isolated;twohost")
# A rank killed inside a passive-target epoch (as the target of the others' shared
# locks, or holding an exclusive lock the others wait for), over every channel
# variant: the job ends cleanly, naming it, and nothing is left in the node directory.
add_executable(mpit_rma_kill ${CMAKE_SOURCE_DIR}/tests/mpi/rma_kill.c)
add_dependencies(mpit_rma_kill wh_headers)
target_include_directories(mpit_rma_kill PRIVATE ${WH_INC})
target_link_libraries(mpit_rma_kill PRIVATE mpi)
set_target_properties(mpit_rma_kill PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
foreach(v ${WH_CHANNEL_VARIANTS})
  wh_variant("${v}")
  string(REPLACE ";" ";--env;" venv "${venv}")
  set(venv "--env;${venv}")
  foreach(mode target holder)
    add_test(NAME mpi.rma.kill_${mode}.${vname}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/arch/rank_kill.py --np 3 ${venv}
              ${WHARFRUN} $<TARGET_FILE:mpit_rma_kill> ${mode})
    set_tests_properties(mpi.rma.kill_${mode}.${vname} PROPERTIES TIMEOUT 200 LABELS "mpi;${vname}" PROCESSORS 3)
  endforeach()
endforeach()
