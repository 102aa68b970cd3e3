# Point-to-point and request API: MPI-level tests (tests/mpi/p2p_*.c), each
# run over every channel variant by wh_mpi_test.
set(P2P_T ${CMAKE_SOURCE_DIR}/tests/mpi)
wh_mpi_test(p2p.pingpong  ${P2P_T}/p2p_pingpong.c 2)
wh_mpi_test(p2p.pingpong4 ${P2P_T}/p2p_pingpong.c 4)
wh_mpi_test(p2p.modes     ${P2P_T}/p2p_modes.c 2)
wh_mpi_test(p2p.order     ${P2P_T}/p2p_order.c 4)
wh_mpi_test(p2p.errors    ${P2P_T}/p2p_errors.c 2)
wh_mpi_test(p2p.probe     ${P2P_T}/p2p_probe.c 2)
wh_mpi_test(p2p.persist   ${P2P_T}/p2p_persist.c 2)
wh_mpi_test(p2p.waitsome  ${P2P_T}/p2p_waitsome.c 2)
wh_mpi_test(p2p.misc      ${P2P_T}/p2p_misc.c 3)
wh_mpi_test(p2p.cancel    ${P2P_T}/p2p_cancel.c 2)
wh_mpi_test(p2p.cancel3   ${P2P_T}/p2p_cancel.c 3)
wh_mpi_test(p2p.alltoall4 ${P2P_T}/p2p_alltoall.c 4)
wh_mpi_test(p2p.alltoall8 ${P2P_T}/p2p_alltoall.c 8)
# large co-resident messages both ranks copy (src/proto/split.c): a sender busy
# outside MPI, more transfers in flight than split lines, truncation, a
# vector receive, head to head
wh_mpi_test(p2p.split     ${P2P_T}/p2p_split.c 2)
# ... with MPI_Alloc_mem buffers: both copy through the node-shared heap
wh_mpi_test(p2p.split_heap ${P2P_T}/p2p_split.c 2 heap)
# ... where the sender may read its peer but not write it (process_vm_writev
# refused by an LD_PRELOAD shim): it hands its chunk back, the receiver copies
# it, every byte still right (not under ASan: its runtime must be preloaded first)
add_library(wh_nowritev SHARED ${CMAKE_SOURCE_DIR}/tests/p2p/nowritev.c)
add_test(NAME mpi.p2p.split_nowritev.shm COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_p2p_split>)
set_tests_properties(mpi.p2p.split_nowritev.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm;nosan"
                     PROCESSORS 2 ENVIRONMENT "WHARF_CHANNEL=auto;LD_PRELOAD=$<TARGET_FILE:wh_nowritev>")

# Waiting when ranks outnumber cores (WHARF_WAIT_SLEEP, src/proto/progress.c):
# the doorbell protocol between processes (sleeper vs two wakers, 20000
# rounds, no lost wake-up), and 8 ranks pinned to one cpu doing a token ring,
# ping-pongs, nonblocking collectives and a flood into rank 0, values checked,
# the run bounded in time (a guard against lost wake-ups, not a speed test:
# on one cpu yielding is as fast) and the ranks must have slept on their
# doorbells (voluntary context switches; 0 with yielding only).
wh_unit_test(doorbell ${CMAKE_SOURCE_DIR}/tests/unit/test_doorbell.c)
wh_unit_test(hostload ${CMAKE_SOURCE_DIR}/tests/unit/test_hostload.c)
wh_mpi_test(p2p.oversub8 ${P2P_T}/p2p_oversub.c 8)
foreach(v shm shmcopy)
  add_test(NAME mpi.p2p.oversub8_1cpu.${v}
           COMMAND taskset -c 0 ${WHARFRUN} -n 8 --timeout 150 $<TARGET_FILE:mpit_p2p_oversub> 30 sleeps)
  # sleep after 20 us of yielding: waits on a quiet machine are short too
  set_tests_properties(mpi.p2p.oversub8_1cpu.${v} PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;${v}"
                       PROCESSORS 2 ENVIRONMENT "WHARF_WAIT_SLEEP_AFTER=20")
endforeach()
set_property(TEST mpi.p2p.oversub8_1cpu.shmcopy APPEND PROPERTY ENVIRONMENT "WHARF_CMA=0")
# the same without sleeping must fail its sleep check (the check can fail)
add_test(NAME mpi.p2p.oversub8_1cpu_nosleep.shm
         COMMAND taskset -c 0 ${WHARFRUN} -n 8 --timeout 150 $<TARGET_FILE:mpit_p2p_oversub> 60 sleeps)
set_tests_properties(mpi.p2p.oversub8_1cpu_nosleep.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
                     PROCESSORS 2 WILL_FAIL TRUE ENVIRONMENT "WHARF_WAIT_SLEEP=off")

# Protocol switch points between co-resident ranks (eager, single copy, the
# pipelined copy; docs/DESIGN.md "Protocols"): data and the MPI_T protocol
# counters for sizes around the thresholds, ping-pong, head-to-head and
# unexpected; over every channel variant, and with the thresholds moved so the
# pipelined copy serves the middle sizes with CMA on, and the old defaults.
wh_mpi_test(p2p.thresholds ${CMAKE_SOURCE_DIR}/tests/p2p/p2p_thresholds.c 2)
# The push (no CMA, or below WHARF_CMA_MIN): many fragments through few small
# slots (the stream stalls and resumes; unexpected messages arrive in parts,
# handed over to the receive or MPI_Mrecv), and switched off.
foreach(f "mid:WHARF_SHM_EAGER_MAX=4096,WHARF_CMA_MIN=65536" "old:WHARF_SHM_EAGER_MAX=8192,WHARF_CMA_MIN=32768"
          "slot:WHARF_SHM_SLOT_SIZE=8192,WHARF_SHM_EAGER_MAX=65536"
          "pushsmall:WHARF_CMA=0,WHARF_SHM_SLOT_SIZE=4096,WHARF_SHM_SLOTS=4,WHARF_SHM_PUSH_MAX=262144"
          "nopush:WHARF_CMA=0,WHARF_SHM_PUSH_MAX=0")
  string(FIND "${f}" ":" colon)
  string(SUBSTRING "${f}" 0 ${colon} fname)
  math(EXPR colon "${colon} + 1")
  string(SUBSTRING "${f}" ${colon} -1 fenv)
  string(REPLACE "," ";" fenv "${fenv}")
  add_test(NAME mpi.p2p.thresholds_${fname}.shm
           COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_p2p_thresholds>)
  set_tests_properties(mpi.p2p.thresholds_${fname}.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
                       PROCESSORS 2 ENVIRONMENT "WHARF_CHANNEL=auto;${fenv}")
endforeach()
# rendezvous between MPI_Alloc_mem buffers: single copy through the node-shared heap
wh_mpi_test(p2p.region ${P2P_T}/p2p_region.c 2)
wh_mpi_test(p2p.region.np3 ${P2P_T}/p2p_region.c 3)
add_test(NAME mpi.p2p.region_report.np4.shm
         COMMAND sh -c "out=$(\"$0\" -n 4 --timeout 150 \"$1\" 2>&1); rc=$?; echo \"$out\"; \
[ $rc = 0 ] && echo \"$out\" | grep -q 'shm/region-copy [1-9]'" ${WHARFRUN} $<TARGET_FILE:mpit_p2p_region>)
set_tests_properties(mpi.p2p.region_report.np4.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
                     PROCESSORS 2 ENVIRONMENT "WHARF_CHANNEL=auto;WHARF_REPORT=channels")

# CMA found slow at MPI_Init (WHARF_CMA_SLOW_RATIO; 1 = whenever process_vm_readv takes longer
# than memcpy, i.e. always): point-to-point messages go through the cells, never CMA, every byte
# still checked (p2p_split's sizes: 64 KiB-4 MiB, truncation, vectors, head to head), and the
# report says so; the single-copy collectives read only node-heap buffers and fall back for the
# others (coll_basic at 3 ranks, single copy from 1 byte).
add_test(NAME mpi.p2p.cma_slow.shm
         COMMAND sh -c "out=$(\"$0\" -n 2 --timeout 150 \"$1\" 2>&1); rc=$?; echo \"$out\"; \
[ $rc = 0 ] && echo \"$out\" | grep -q 'CMA: process_vm_readv of 256 KiB took [0-9.]*x memcpy.s time on rank 0: point-to-point and one-sided copies go through the shared cells' \
&& echo \"$out\" | grep -q 'rendezvous: pipelined fragments (CMA slow here'"
                 ${WHARFRUN} $<TARGET_FILE:mpit_p2p_split>)
set_tests_properties(mpi.p2p.cma_slow.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2
                     ENVIRONMENT "WHARF_CHANNEL=auto;WHARF_CMA=1;WHARF_CMA_SLOW_RATIO=1;WHARF_REPORT=locality")
# The same verdict on a node that runs more ranks than cpus (one cpu for two ranks by taskset):
# point-to-point keeps CMA all the same (WHARF_CMA_OVERSUB), the report says so, every byte checked.
add_test(NAME mpi.p2p.cma_slow_oversub.shm
         COMMAND sh -c "out=$(taskset -c 0 \"$0\" -n 2 --timeout 150 \"$1\" 2>&1); rc=$?; echo \"$out\"; \
[ $rc = 0 ] && echo \"$out\" | grep -q 'memcpy.s time on rank 0: used for rendezvous from WHARF_CMA_MIN all the same' \
&& echo \"$out\" | grep -q 'rendezvous: zero-copy get from WHARF_CMA_MIN'"
                 ${WHARFRUN} $<TARGET_FILE:mpit_p2p_split>)
set_tests_properties(mpi.p2p.cma_slow_oversub.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2
                     ENVIRONMENT "WHARF_CHANNEL=auto;WHARF_CMA=1;WHARF_CMA_SLOW_RATIO=1;WHARF_REPORT=locality")
add_test(NAME mpi.coll.cma_slow.np3.shm COMMAND ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_coll_basic>)
set_tests_properties(mpi.coll.cma_slow.np3.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm" PROCESSORS 2
                     ENVIRONMENT "WHARF_CHANNEL=auto;WHARF_CMA=1;WHARF_CMA_SLOW_RATIO=1;WHARF_COLL_CMA_MIN=1")
