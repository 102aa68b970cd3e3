# Container/host scenarios emulated with Linux namespaces (docs/SCENARIOS.md).
# Need root, util-linux and iproute2; exit code 77 (skipped) otherwise.
set(WH_SCENARIOS ${CMAKE_SOURCE_DIR}/tests/scenarios)

# The harness itself, with shell commands only (no MPI): namespaces, /dev/shm,
# volume, network, agent semantics, cleanup.
add_test(NAME scenarios.selftest COMMAND ${Python3_EXECUTABLE} ${WH_SCENARIOS}/wharfns.py selftest)
set_tests_properties(scenarios.selftest PROPERTIES
  SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 300)

# wharf launched by wharfrun in every scenario: the p2p ping-pong with one rank
# per container (the cross-container path; twohost: 4 ranks, pairs within a
# host, the ring across).  The target comes from tests/p2p/CMakeLists.part.cmake,
# included before this file (parts are included in name order).
if(TARGET mpit_p2p_pingpong)
  foreach(sc shared pidpriv volume isolated twohost)
    set(np 2)
    if(sc STREQUAL "twohost")
      set(np 4)
    endif()
    add_test(NAME scenarios.${sc}.p2p_pingpong
      COMMAND ${Python3_EXECUTABLE} ${WH_SCENARIOS}/wharfns.py run ${sc} -n ${np} --wharfrun ${WHARFRUN}
              --timeout 150 -- $<TARGET_FILE:mpit_p2p_pingpong>)
    set_tests_properties(scenarios.${sc}.p2p_pingpong PROPERTIES
      SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 240)
  endforeach()
endif()

# Hierarchical collectives across two emulated hosts: correctness with real
# values, and fewer messages between the hosts than the flat algorithms.
# The target comes from tests/coll/CMakeLists.part.cmake (included before).
if(TARGET mpit_coll_hier)
  add_test(NAME scenarios.twohost.coll_hier
    COMMAND ${Python3_EXECUTABLE} ${WH_SCENARIOS}/coll_hier.py ${WHARFRUN} $<TARGET_FILE:mpit_coll_hier>)
  set_tests_properties(scenarios.twohost.coll_hier PROPERTIES
    SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 400)
endif()

# Shared-memory collectives (small, large, sleeping waiters) between ranks in
# different containers of one host: shared IPC, private PID namespaces (the
# futex wake crosses them), a shared volume; isolated falls back to the net.
if(TARGET mpit_coll_shm)
  foreach(sc shared pidpriv volume isolated)
    add_test(NAME scenarios.${sc}.coll_shm
      COMMAND ${Python3_EXECUTABLE} ${WH_SCENARIOS}/wharfns.py run ${sc} -n 2 --wharfrun ${WHARFRUN}
              --timeout 150 -- $<TARGET_FILE:mpit_coll_shm>)
    set_tests_properties(scenarios.${sc}.coll_shm PROPERTIES ENVIRONMENT "WHARF_COLL_SLEEP=on;WHARF_COLL_SPIN=1;WHARF_COLL_SLEEP_AFTER=0"
      SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 240)
  endforeach()
endif()

# wh_scenario_grep_test(NAME EXE PATTERN ENV SCENARIOS [ARGS...]): EXE on 2 ranks in
# each scenario with ENV, passing only if it succeeds and its output matches PATTERN
# (a WHARF_REPORT line: the path under test was taken).
function(wh_scenario_grep_test NAME EXE PATTERN ENV SCENARIOS)
  foreach(sc ${SCENARIOS})
    add_test(NAME scenarios.${sc}.${NAME}
      COMMAND sh -c "out=$(\"$0\" \"$1\" run ${sc} -n 2 --wharfrun \"$2\" --timeout 150 -- \"$3\" ${ARGN} 2>&1); \
rc=$?; echo \"$out\"; [ $rc = 77 ] && exit 77; [ $rc = 0 ] && echo \"$out\" | grep -q '${PATTERN}'"
              ${Python3_EXECUTABLE} ${WH_SCENARIOS}/wharfns.py ${WHARFRUN} ${EXE})
    set_tests_properties(scenarios.${sc}.${NAME} PROPERTIES ENVIRONMENT "${ENV}"
      SKIP_RETURN_CODE 77 LABELS scenarios RUN_SERIAL true TIMEOUT 240)
  endforeach()
endfunction()

# Rendezvous between MPI_Alloc_mem buffers of ranks in different containers:
# without CMA (private PID namespaces, a shared volume) the node-shared heap
# still gives one copy; the report must show region copies.
if(TARGET mpit_p2p_region)
  wh_scenario_grep_test(p2p_region $<TARGET_FILE:mpit_p2p_region> "shm/region-copy [1-9]" "WHARF_REPORT=channels"
                        "pidpriv;volume")
endif()

# ... and both ranks copy a large one at once (the split transfer through
# the heap): every split case of p2p_split over MPI_Alloc_mem buffers (the
# report counts the split as single-copy, which only it gives here).
if(TARGET mpit_p2p_split)
  wh_scenario_grep_test(p2p_split_heap $<TARGET_FILE:mpit_p2p_split> "shm/single-copy [1-9]" "WHARF_REPORT=channels"
                        "pidpriv;volume" heap)
endif()

# The single-copy collectives over MPI_Alloc_mem buffers between containers
# without CMA (region loads and stores): results checked by the program, the
# report must show the reduces on the cma path.
if(TARGET mpit_coll_cma_reduce)
  wh_scenario_grep_test(coll_cma_heap $<TARGET_FILE:mpit_coll_cma_reduce> "reduce[^;]*cma [1-9]"
                        "WHARF_REPORT=coll;WHARF_COLL_CMA_MIN=4096" "pidpriv;volume" heap)
endif()
