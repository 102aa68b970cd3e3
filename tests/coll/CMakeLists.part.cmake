# Reduction operations and collectives: unit tests of src/op and MPI-level
# tests of every collective on 2, 3, 4 and 8 ranks (non-powers of two
# included).  Included from tests/CMakeLists.txt.
wh_unit_test(op ${CMAKE_SOURCE_DIR}/tests/unit/test_op.c)
wh_unit_test(scratch ${CMAKE_SOURCE_DIR}/tests/unit/test_scratch.c)
foreach(np 2 3 4 8)
  wh_mpi_test(coll.basic.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_basic.c ${np})
endforeach()
foreach(np 2 3 4 8)
  wh_mpi_test(coll.alltoall.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_alltoall.c ${np})
endforeach()
# the other point-to-point alltoall (the default up to 32 ranks is scattered)
foreach(np 3 8)
  wh_mpi_test_env(coll.alltoall_pairwise.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_alltoall.c ${np}
                  "WHARF_COLL_ALLTOALL=pairwise")
endforeach()
# 5, 6, 7: scan's recursive doubling skips messages by rank position
foreach(np 2 3 4 5 6 7 8)
  wh_mpi_test(coll.reduce.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_reduce.c ${np})
endforeach()
# scan and exscan along the pipelined chain (chain.c) for every size, in 16-byte
# chunks: commutative and not, in place, and counts that differ between ranks
foreach(np 3 5)
  foreach(t reduce:coll_reduce mismatch:coll_mismatch)
    string(REPLACE ":" ";" t "${t}")
    list(GET t 0 tname)
    list(GET t 1 src)
    wh_mpi_test_env(coll.${tname}_chain.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/${src}.c ${np}
                    "WHARF_COLL_SCAN_CHAIN=1;WHARF_COLL_SCAN_CHUNK=16")
  endforeach()
endforeach()
foreach(np 2 3 4 8)
  wh_mpi_test(coll.errors.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_errors.c ${np})
endforeach()
# Nonblocking and persistent collectives (schedules, src/coll/sched*.c): one
# program, run as MPI_I* and as MPI_*_init + MPI_Start ("persist").
foreach(np 1 2 3 4 5 8)
  wh_mpi_test(coll.nbc.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc.c ${np})
  wh_mpi_test(coll.persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc.c ${np} persist)
endforeach()
# MPI_Ibarrier / MPI_Barrier_init through the node block (and, =0, the schedule)
foreach(np 2 3 5)
  wh_mpi_test(coll.ibarrier_shm.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_ibarrier_shm.c ${np})
endforeach()
wh_mpi_test_env(coll.ibarrier_p2p.np4 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_ibarrier_shm.c 4 "WHARF_COLL_SHM_NBC=0")
# test-type calls that give the core away (forced on: this machine may not oversubscribe)
wh_mpi_test_env(coll.nbc_progress_testyield.np3 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc_progress.c 3 "WHARF_TEST_YIELD=on")
foreach(np 2 3 5)
  wh_mpi_test(coll.nbc_progress.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc_progress.c ${np})
endforeach()
# Op/type pairs MPICH accepts beyond the standard (src/op), in real reductions.
foreach(np 1 3 8)
  wh_mpi_test(coll.ops_mpich.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_ops_mpich.c ${np})
endforeach()
foreach(np 1 3 4)
  wh_mpi_test(coll.nbc_errors.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbc_errors.c ${np})
endforeach()
# Nonblocking and persistent neighbourhood collectives (schedules with per-step
# tag offsets): periodic grids with dimensions of size 1 and 2, borders, graph,
# weighted distributed graph.
foreach(np 1 2 3 4 5 6 7 8)
  wh_mpi_test(coll.nbr_nb.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbr_nb.c ${np})
  wh_mpi_test(coll.nbr_persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_nbr_nb.c ${np} persist)
endforeach()
# Intercommunicator collectives (src/coll/inter.c), blocking, nonblocking and
# persistent, over groups of unequal sizes.
foreach(np 2 3 4 5 7 8)
  wh_mpi_test(coll.inter.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np})
  wh_mpi_test(coll.inter_nb.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np} nb)
  wh_mpi_test(coll.inter_persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_inter.c ${np} persist)
endforeach()

# node-shared-memory collectives (and their fallbacks over the net variant)
foreach(np 2 3 4 5 8)
  wh_mpi_test(coll.shm.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c ${np})
endforeach()
# the same with small pipeline chunks (many chunks per message, ragged ends,
# slices of a few elements) and with the large path off (p2p fallback)
foreach(np 3 6)
  wh_mpi_test_env(coll.shm_chunk.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c ${np} "WHARF_COLL_SHM_CHUNK=4160")
endforeach()
# waiters that sleep on the flags (futex) after one poll (no yielding phase), and never
foreach(mode on off)
  wh_mpi_test_env(coll.shm_sleep_${mode}.np5 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c 5
                  "WHARF_COLL_SLEEP=${mode};WHARF_COLL_SPIN=1;WHARF_COLL_SLEEP_AFTER=0")
endforeach()
# ranks far outnumbering cpus (WHARF_COLL_SLEEP_RATIO; one cpu here): waiters sleep at once and
# rank 0 alone combines an allreduce and releases the others; the debug log must say so
foreach(np 3 6)
  add_test(NAME mpi.coll.shm_herd.np${np}.shm
           COMMAND sh -c "out=$(taskset -c 0 \"$0\" -n ${np} --timeout 150 \"$1\" 2>&1); rc=$?; echo \"$out\"; \
[ $rc = 0 ] && echo \"$out\" | grep -q 'allreduce combined by rank 0'"
                   ${WHARFRUN} $<TARGET_FILE:mpit_coll_shm>)
  set_tests_properties(mpi.coll.shm_herd.np${np}.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
    ENVIRONMENT "WHARF_COLL_SLEEP_RATIO=1;WHARF_COLL_SLEEP=on;WHARF_LOG=debug")
endforeach()
add_test(NAME mpi.coll.mismatch_herd.np4.shm
         COMMAND taskset -c 0 ${WHARFRUN} -n 4 --timeout 150 $<TARGET_FILE:mpit_coll_mismatch>)
set_tests_properties(mpi.coll.mismatch_herd.np4.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
  ENVIRONMENT "WHARF_COLL_SLEEP_RATIO=1;WHARF_COLL_SLEEP=on")
# the flat barrier at 3 ranks (WHARF_COLL_SHM_BARRIER=flat; auto takes release there), with and without sleeping
wh_mpi_test_env(coll.shm_flat.np3 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c 3 "WHARF_COLL_SHM_BARRIER=flat")
wh_mpi_test_env(coll.shm_flat.np5 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c 5
                "WHARF_COLL_SHM_BARRIER=flat;WHARF_COLL_SLEEP=on;WHARF_COLL_SPIN=1;WHARF_COLL_SLEEP_AFTER=0")
wh_mpi_test_env(coll.shm_nolarge.np4 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_shm.c 4 "WHARF_COLL_SHM_CHUNK=0")

# Hierarchical collectives (src/coll/hier.c) over node groups emulated on one
# machine: WHARF_LOCALITY=launcher and a WHARF_HOST_ID per rank computed from
# PMI_RANK by a shell expression (contiguous "/2", interleaved "%2", uneven
# "/3"), so each group has its own node region and the groups talk over the
# network channel (over shm, shmcopy and net inside a group).
# The same program on one node (flat algorithms) also defines the target.
wh_mpi_test(coll.hier_flat.np5 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_hier.c 5 any)
# wh_hier_test(NAME NPROCS GROUPEXPR [TARGET [ARGS...]]): TARGET (default
# mpit_coll_hier) with ARGS over node groups GROUPEXPR
function(wh_hier_test NAME NPROCS GROUPEXPR)
  set(args ${ARGN})
  set(tgt mpit_coll_hier)
  if(args)
    list(POP_FRONT args tgt)
  endif()
  foreach(v ${WH_CHANNEL_VARIANTS})
    wh_variant("${v}")
    add_test(NAME mpi.${NAME}.${vname}
             COMMAND ${WHARFRUN} -n ${NPROCS} --timeout 150 /bin/sh -c
                     "WHARF_HOST_ID=$((PMI_RANK${GROUPEXPR})) exec \"$0\" \"$@\"" $<TARGET_FILE:${tgt}> ${args})
    set_tests_properties(mpi.${NAME}.${vname} PROPERTIES ENVIRONMENT "${venv};WHARF_LOCALITY=launcher"
                         TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;${vname}" PROCESSORS ${NPROCS})
  endforeach()
endfunction()
wh_hier_test(coll.hier.np4 4 "/2")
wh_hier_test(coll.hier.np5 5 "%2")
wh_hier_test(coll.hier.np6 6 "/3")
wh_hier_test(coll.hier.np7 7 "%3")

# A rank killed inside shared-memory collectives: the job ends cleanly,
# nothing is left in the node directory.
add_executable(mpit_coll_kill ${CMAKE_SOURCE_DIR}/tests/mpi/coll_kill.c)
add_dependencies(mpit_coll_kill wh_headers)
target_include_directories(mpit_coll_kill PRIVATE ${WH_INC})
target_link_libraries(mpit_coll_kill PRIVATE mpi)
set_target_properties(mpit_coll_kill PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
add_test(NAME coll.kill_in_shm
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/arch/rank_kill.py
          --env WHARF_COLL_SLEEP=on --env WHARF_COLL_SPIN=10 --env WHARF_COLL_SLEEP_AFTER=0
          ${WHARFRUN} $<TARGET_FILE:mpit_coll_kill>)
set_tests_properties(coll.kill_in_shm PROPERTIES TIMEOUT 200 LABELS "mpi;shm" PROCESSORS 4)
# root and receivers with different layouts of the same bytes, across the shm switch points
foreach(np 3 4)
  wh_mpi_test(coll.bcast_layout.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_bcast_layout.c ${np})
endforeach()
# every data-moving collective with the ranks' layouts mixed (contiguous,
# strided, one vector) for one type signature, MPI_IN_PLACE at one rank only,
# blocking, nonblocking and persistent, across the shm switch points
foreach(np 3 4)
  wh_mpi_test(coll.layout.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_layout.c ${np})
  wh_mpi_test(coll.layout_nb.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_layout.c ${np} nb)
  wh_mpi_test(coll.layout_persist.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_layout.c ${np} persist)
endforeach()
wh_mpi_test(coll.layout.np2 ${CMAKE_SOURCE_DIR}/tests/mpi/coll_layout.c 2)
# single-copy allgather and bcast (shmcma.c) at every size: mixed layouts make
# the ranks agree to fall back; over shmcopy and net none can read in place
foreach(np 2 3 4)
  wh_mpi_test_env(coll.layout_cma.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_layout.c ${np} "WHARF_COLL_CMA_MIN=1")
  wh_mpi_test_env(coll.basic_cma.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_basic.c ${np} "WHARF_COLL_CMA_MIN=1")
endforeach()
# a two-rank bcast's root writes the upper half (shmcma.c): the same with every
# write refused (LD_PRELOAD shim, tests/p2p/nowritev.c): both fall back, then
# the other rank reads it all
add_test(NAME mpi.coll.bcast_layout_nowritev.np2.shm
         COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_coll_bcast_layout>)
set_tests_properties(mpi.coll.bcast_layout_nowritev.np2.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT}
                     LABELS "mpi;shm;nosan" PROCESSORS 2
                     ENVIRONMENT "WHARF_CHANNEL=auto;LD_PRELOAD=$<TARGET_FILE:wh_nowritev>")
# Collectives called with different counts on different ranks: errors, no hang,
# the communicator usable after; with the default algorithms (shared memory
# where it runs), the point-to-point ones (WHARF_COLL_SHM=0) and the
# hierarchical ones (two and three node groups).
foreach(np 2 3 4)
  wh_mpi_test(coll.mismatch.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_mismatch.c ${np})
  wh_mpi_test_env(coll.mismatch_p2p.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_mismatch.c ${np} "WHARF_COLL_SHM=0")
endforeach()
# the large shared-memory paths with counts that need different numbers of chunks
foreach(np 2 3 4)
  wh_mpi_test(coll.mismatch_large.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_mismatch_large.c ${np})
endforeach()
wh_hier_test(coll.mismatch_hier.np4 4 "/2" mpit_coll_mismatch hier)
wh_hier_test(coll.mismatch_hier.np5 5 "%3" mpit_coll_mismatch hier)
# reduce through the single-copy slices (shmcma.c): types, ops, roots, in
# place, counts around the switch point (scaled down by WHARF_COLL_CMA_MIN);
# on the shm variant the report must show the cma path taken, and with every
# write refused (LD_PRELOAD shim) all fall back to the cells
foreach(np 2 3 4 8)
  wh_mpi_test_env(coll.cma_reduce.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_cma_reduce.c ${np}
                  "WHARF_COLL_CMA_MIN=4096")
  # every buffer in the node-shared heap (MPI_Alloc_mem): region copies
  wh_mpi_test_env(coll.cma_heap.np${np} ${CMAKE_SOURCE_DIR}/tests/mpi/coll_cma_reduce.c ${np}
                  "WHARF_COLL_CMA_MIN=4096" heap)
endforeach()
foreach(np 2 3)
  add_test(NAME mpi.coll.cma_reduce_path.np${np}.shm
           COMMAND sh -c "out=$(\"$0\" -n ${np} --timeout 150 \"$1\" 2>&1); rc=$?; echo \"$out\"; \
[ $rc = 0 ] && echo \"$out\" | grep -q 'reduce[^;]*cma [1-9]'"
                   ${WHARFRUN} $<TARGET_FILE:mpit_coll_cma_reduce>)
  set_tests_properties(mpi.coll.cma_reduce_path.np${np}.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
    PROCESSORS 2 ENVIRONMENT "WHARF_CHANNEL=auto;WHARF_REPORT=coll;WHARF_COLL_CMA_MIN=8192")
  add_test(NAME mpi.coll.cma_reduce_nowritev.np${np}.shm
           COMMAND ${WHARFRUN} -n ${np} --timeout 150 $<TARGET_FILE:mpit_coll_cma_reduce>)
  set_tests_properties(mpi.coll.cma_reduce_nowritev.np${np}.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT}
                       LABELS "mpi;shm;nosan" PROCESSORS 2
                       ENVIRONMENT "WHARF_COLL_CMA_MIN=8192;WHARF_CHANNEL=auto;LD_PRELOAD=$<TARGET_FILE:wh_nowritev>")
endforeach()
# The shared-memory barrier may differ between ranks (WHARF_COLL_SHM_BARRIER
# auto picks by the node's cpus, which a container may see differently):
# release on even ranks, flat on odd ones, every collective still right.
foreach(np 2 4)
  add_test(NAME mpi.coll.barrier_mixed.np${np}.shm
           COMMAND ${WHARFRUN} -n ${np} --timeout 150 sh -c "if [ $((PMI_RANK % 2)) = 1 ]; then \
export WHARF_COLL_SHM_BARRIER=flat; else export WHARF_COLL_SHM_BARRIER=release; fi; exec \"$0\"" $<TARGET_FILE:mpit_coll_basic>)
  set_tests_properties(mpi.coll.barrier_mixed.np${np}.shm PROPERTIES TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;shm"
                       PROCESSORS ${np})
endforeach()
