# The emulated CUDA driver (libcuda.so.1, tests/cudaemu) and its own tests.
# It is compiled against NVIDIA's cuda.h, fetched at configure time from PyPI
# (nvidia-cuda-runtime-cu12, pinned in fetch_cuda_h.py) into the build tree and
# never committed.  Without it the GPU parts are skipped with one message;
# wharf itself still builds (it declares the few driver types it uses and
# loads the driver at run time).
option(WHARF_CUDAEMU "Build the emulated CUDA driver and the GPU tests (fetches cuda.h from PyPI)" ON)
set(WH_CUDAEMU_OK OFF)
if(WHARF_CUDAEMU)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/cudaemu/fetch_cuda_h.py ${CMAKE_BINARY_DIR}/cuda-header
    OUTPUT_VARIABLE WH_CUDA_INC ERROR_VARIABLE wh_cuda_err RESULT_VARIABLE wh_cuda_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(wh_cuda_rc EQUAL 0 AND EXISTS ${WH_CUDA_INC}/cuda.h)
    set(WH_CUDAEMU_OK ON)
    message(STATUS "cudaemu: using ${WH_CUDA_INC}/cuda.h")
  else()
    message(WARNING "GPU parts skipped (emulated CUDA driver and GPU tests): cannot get cuda.h: ${wh_cuda_err}. "
                    "Set WHARF_CUDA_H=/path/to/cuda.h or reconfigure with network access to PyPI.")
  endif()
else()
  message(STATUS "GPU parts skipped: WHARF_CUDAEMU=OFF")
endif()

if(WH_CUDAEMU_OK)
  set(WH_CUDAEMU_DIR ${CMAKE_BINARY_DIR}/cudaemu)
  set(CUEMU ${CMAKE_SOURCE_DIR}/tests/cudaemu)
  add_library(cudaemu SHARED ${CUEMU}/emu_core.c ${CUEMU}/emu_mem.c ${CUEMU}/emu_stream.c ${CUEMU}/emu_proc.c
              ${CUEMU}/emu_vmm.c ${CUEMU}/emu_module.c)
  set_target_properties(cudaemu PROPERTIES OUTPUT_NAME cuda SOVERSION 1 LIBRARY_OUTPUT_DIRECTORY ${WH_CUDAEMU_DIR})
  target_include_directories(cudaemu SYSTEM PRIVATE ${WH_CUDA_INC})
  target_include_directories(cudaemu PRIVATE ${CMAKE_SOURCE_DIR}/src) # (rgpu/cu_table.h: shared with the rgpu client)
  target_compile_options(cudaemu PRIVATE ${WH_WARN} -fvisibility=hidden)
  target_link_libraries(cudaemu PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

  # the GDRCopy-like library next to it
  add_library(gdremu SHARED ${CUEMU}/gdr.c)
  set_target_properties(gdremu PROPERTIES OUTPUT_NAME gdrapi SOVERSION 2 LIBRARY_OUTPUT_DIRECTORY ${WH_CUDAEMU_DIR})
  target_compile_options(gdremu PRIVATE ${WH_WARN} -fvisibility=hidden)
  target_link_libraries(gdremu PRIVATE ${CMAKE_DL_LIBS})

  # environment of every test that runs on the emulator
  set(WH_CUDAEMU_ENV "LD_LIBRARY_PATH=${WH_CUDAEMU_DIR}" "CUDAEMU_TOPOLOGY=${CUEMU}/topo4.txt")

  function(wh_cudaemu_test NAME)
    cmake_parse_arguments(T "" "" "ENV" ${ARGN})
    add_executable(cudaemu_${NAME} ${CUEMU}/t_${NAME}.c)
    target_include_directories(cudaemu_${NAME} SYSTEM PRIVATE ${WH_CUDA_INC})
    target_compile_options(cudaemu_${NAME} PRIVATE ${WH_WARN})
    target_link_libraries(cudaemu_${NAME} PRIVATE ${CMAKE_DL_LIBS})
    add_dependencies(cudaemu_${NAME} cudaemu)
    set_target_properties(cudaemu_${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cudaemu)
    add_test(NAME cudaemu.${NAME} COMMAND cudaemu_${NAME})
    set_tests_properties(cudaemu.${NAME} PROPERTIES TIMEOUT 120 LABELS "unit;gpu"
                         ENVIRONMENT "${WH_CUDAEMU_ENV};${T_ENV}")
  endfunction()

  wh_cudaemu_test(basic ENV "CUDAEMU_VISIBLE=1,3" "CUDAEMU_FAIL=cuMemAlloc@4")
  wh_cudaemu_test(stream ENV "CUDAEMU_STREAM_DELAY_US=3000")
  # the same with idle copy engines sleeping at once instead of polling for their next
  # operation first (CUDAEMU_ENGINE_POLL_US, default 50)
  add_test(NAME cudaemu.stream.enginesleep COMMAND cudaemu_stream)
  set_tests_properties(cudaemu.stream.enginesleep PROPERTIES TIMEOUT 120 LABELS "unit;gpu"
                       ENVIRONMENT "${WH_CUDAEMU_ENV};CUDAEMU_STREAM_DELAY_US=300;CUDAEMU_ENGINE_POLL_US=0")
  wh_cudaemu_test(crash)
  # helping: threads that query or wait run a stream's ready work (no delay configured)
  wh_cudaemu_test(help)
  find_package(Threads REQUIRED)
  target_link_libraries(cudaemu_help PRIVATE Threads::Threads)
  # a query does not wait out a copy's modeled time (64 KiB at 0.001 GB/s: 65 ms)
  add_test(NAME cudaemu.help.slowcopy COMMAND cudaemu_help)
  set_tests_properties(cudaemu.help.slowcopy PROPERTIES TIMEOUT 60 LABELS "unit;gpu"
                       ENVIRONMENT "${WH_CUDAEMU_ENV};T_SLOW_COPY=1;CUDAEMU_D2H_GBPS=0.001")
  wh_cudaemu_test(ipc ENV "CUDAEMU_VISIBLE=2,3" "CUDAEMU_STREAM_DELAY_US=20000")
  wh_cudaemu_test(abi)
  wh_cudaemu_test(gdr)
  add_dependencies(cudaemu_gdr gdremu)
  wh_cudaemu_test(vmm ENV "CUDAEMU_VISIBLE=0,1" "CUDAEMU_STREAM_DELAY_US=500")
  target_include_directories(cudaemu_abi PRIVATE ${CMAKE_SOURCE_DIR}/src)
endif()

# MPI tests on device buffers: built with wharf, run with wharfrun over every
# channel variant with the emulator as the CUDA driver (WHARF_CUDA=1: MPI_Init
# fails if wharf cannot load it).
if(WH_CUDAEMU_OK)
  function(wh_gpu_mpi_test NAME SOURCE NPROCS)
    cmake_parse_arguments(T "" "" "ENV" ${ARGN})
    get_filename_component(base ${SOURCE} NAME_WE)
    set(tgt mpit_${base})
    if(NOT TARGET ${tgt})
      add_executable(${tgt} ${SOURCE})
      add_dependencies(${tgt} wh_headers cudaemu gdremu)
      target_include_directories(${tgt} PRIVATE ${WH_INC})
      target_include_directories(${tgt} SYSTEM PRIVATE ${WH_CUDA_INC})
      target_link_libraries(${tgt} PRIVATE mpi ${CMAKE_DL_LIBS})
      target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wno-unused-parameter)
      set_target_properties(${tgt} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
    endif()
    foreach(v ${WH_CHANNEL_VARIANTS})
      wh_variant("${v}")
      add_test(NAME mpi.${NAME}.${vname} COMMAND ${WHARFRUN} -n ${NPROCS} --timeout 150 $<TARGET_FILE:${tgt}>)
      set_tests_properties(mpi.${NAME}.${vname} PROPERTIES
        ENVIRONMENT "${venv};${WH_CUDAEMU_ENV};WHARF_CUDA=1;${T_ENV}" TIMEOUT ${WH_TEST_TIMEOUT}
        LABELS "mpi;gpu;${vname}" PROCESSORS ${NPROCS})
    endforeach()
  endfunction()

  wh_gpu_mpi_test(gpu.p2p ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "CUDAEMU_STREAM_DELAY_US=50")
  wh_gpu_mpi_test(gpu.p2p4 ${CUEMU}/gpu_p2p.c 4 ENV "CUDAEMU_TIMING=0")
  # collectives, reductions, pack/unpack, bsend on device buffers (coll_dev.c, dtype/devmem.c)
  wh_gpu_mpi_test(gpu.coll ${CUEMU}/gpu_coll.c 3 ENV "CUDAEMU_STREAM_DELAY_US=30" "CUDAEMU_TIMING=0")
  wh_gpu_mpi_test(gpu.coll4 ${CUEMU}/gpu_coll.c 4 ENV "CUDAEMU_TIMING=0")
  # intercommunicator and neighbourhood collectives, MPI_Pack_external on device buffers
  wh_gpu_mpi_test(gpu.coll_topo ${CUEMU}/gpu_coll_topo.c 3 ENV "CUDAEMU_STREAM_DELAY_US=30" "CUDAEMU_TIMING=0")
  wh_gpu_mpi_test(gpu.coll_topo4 ${CUEMU}/gpu_coll_topo.c 4 ENV "CUDAEMU_TIMING=0")
  # the pointer-kind cache: few driver queries, forgotten on free; off = one query per message
  wh_gpu_mpi_test(gpu.kcache ${CUEMU}/gpu_kcache.c 2 ENV "CUDAEMU_VISIBLE=0,1")
  wh_gpu_mpi_test(gpu.kcache_off ${CUEMU}/gpu_kcache.c 2 ENV "CUDAEMU_VISIBLE=0,1" "WHARF_CUDA_KCACHE=0")
  # GDRCopy for small copies (src/mem/cuda/gdr.c): used, and a refused pin falls back with a warning
  wh_gpu_mpi_test(gpu.gdr ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "WHARF_LOG=info" "CUDAEMU_STREAM_DELAY_US=50")
  wh_gpu_mpi_test(gpu.gdr_fault ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "CUDAEMU_FAIL=gdr_pin_buffer")
  foreach(v shm shmcopy net)
    set_tests_properties(mpi.gpu.gdr.${v} PROPERTIES PASS_REGULAR_EXPRESSION "GDRCopy: [1-9][0-9]* small copies"
                         FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;wharfrun: rank")
    set_tests_properties(mpi.gpu.gdr_fault.${v} PROPERTIES PASS_REGULAR_EXPRESSION "GDRCopy could not pin"
                         FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;wharfrun: rank;GDRCopy: [1-9]")
  endforeach()
  # one-sided operations with device origin and result buffers (rma_dev.c)
  wh_gpu_mpi_test(gpu.rma ${CUEMU}/gpu_rma.c 3 ENV "CUDAEMU_STREAM_DELAY_US=30" "CUDAEMU_TIMING=0")
  # windows over device memory: every operation through the target's handlers, staged (src/rma/target.c)
  wh_gpu_mpi_test(gpu.rmawin ${CUEMU}/gpu_rmawin.c 3 ENV "CUDAEMU_STREAM_DELAY_US=30" "CUDAEMU_TIMING=0")
  wh_gpu_mpi_test(gpu.rmawin4 ${CUEMU}/gpu_rmawin.c 4 ENV "CUDAEMU_TIMING=0")
  wh_gpu_mpi_test(gpu.rmawin_async ${CUEMU}/gpu_rmawin.c 3 ENV "CUDAEMU_TIMING=0" "WHARF_ASYNC_PROGRESS=1")
  # every scheme but the staged fragments switched off by the tunables
  wh_gpu_mpi_test(gpu.staged ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "WHARF_CUDA_IPC=0" "WHARF_CUDA_PIPE=0"
                  "WHARF_CUDA_EAGER_MAX=0" "WHARF_REPORT=channels")
  foreach(v shm shmcopy net)
    set_tests_properties(mpi.gpu.staged.${v} PROPERTIES PASS_REGULAR_EXPRESSION "gpu p2p: ok"
                         FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;wharfrun: rank;cuda-ipc;pipeline")
  endforeach()
  # every device-buffer scheme forced by WHARF_CUDA_SCHEME over point-to-point (random stream delays:
  # a pipeline that published a chunk before its copy's event fired reads stale data); the gpu report
  # must count the forced scheme and no other large-message scheme
  set(gchk "check failed: ;gpu p2p: FAILED;wharfrun: rank")
  foreach(sch gdrcopy eager staged pipeline ipc)
    wh_gpu_mpi_test(gpu.scheme_${sch} ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "CUDAEMU_STREAM_DELAY_US=50"
                    "WHARF_CUDA_SCHEME=${sch}" "WHARF_REPORT=channels,gpu" "WHARF_LOG=info")
  endforeach()
  set(gok "gpu p2p: ok[^\n]*\n(.*\n)*")
  foreach(v shm shmcopy net)
    set_tests_properties(mpi.gpu.scheme_gdrcopy.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 gpu peer 1:[^\n]*messages:[^\n]* gdrcopy [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};cuda-ipc [1-9];pipeline [1-9]")
    set_tests_properties(mpi.gpu.scheme_eager.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 gpu peer 1:[^\n]*messages:[^\n]* eager [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};cuda-ipc [1-9];pipeline [1-9];GDRCopy: [1-9]")
    set_tests_properties(mpi.gpu.scheme_staged.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 gpu peer 1:[^\n]*messages:[^\n]* staged [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};cuda-ipc [1-9];pipeline [1-9];GDRCopy: [1-9]")
  endforeach()
  foreach(v shm shmcopy)
    set_tests_properties(mpi.gpu.scheme_pipeline.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 channels:[^\n]* shm/pipeline [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};cuda-ipc [1-9];staged [1-9]")
    set_tests_properties(mpi.gpu.scheme_ipc.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 channels:[^\n]* shm/cuda-ipc [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};pipeline [1-9]") # non-contiguous layouts stay staged
  endforeach()
  foreach(sch pipeline ipc) # network peers: neither applies, staged
    set_tests_properties(mpi.gpu.scheme_${sch}.net PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 gpu peer 1: [^\n]*network peer[^\n]*messages:[^\n]* staged [1-9]"
      FAIL_REGULAR_EXPRESSION "${gchk};cuda-ipc [1-9];pipeline [1-9]")
  endforeach()
  # pipeline with chunks smaller than the messages and double buffering (many turns of the ring)
  wh_gpu_mpi_test(gpu.pipe_small ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "CUDAEMU_STREAM_DELAY_US=50"
                  "WHARF_CUDA_SCHEME=pipeline" "WHARF_CUDA_PIPE_CHUNK=8192" "WHARF_CUDA_PIPE_DEPTH=2"
                  "WHARF_REPORT=channels")
  foreach(v shm shmcopy)
    set_tests_properties(mpi.gpu.pipe_small.${v} PROPERTIES
      PASS_REGULAR_EXPRESSION "${gok}wharf: rank 0 channels:[^\n]* shm/pipeline [1-9]" FAIL_REGULAR_EXPRESSION "${gchk}")
  endforeach()
  # the workload tracer: a blocking ping-pong peer and a nonblocking windowed peer classify
  # differently and, with a tuning file whose switch points differ by class, move 64 KiB by
  # different schemes (CUDA IPC vs the pipeline); without the file both use CUDA IPC
  add_executable(mpit_gpu_trace ${CUEMU}/gpu_trace.c)
  add_dependencies(mpit_gpu_trace wh_headers cudaemu gdremu)
  target_include_directories(mpit_gpu_trace PRIVATE ${WH_INC})
  target_include_directories(mpit_gpu_trace SYSTEM PRIVATE ${WH_CUDA_INC})
  target_link_libraries(mpit_gpu_trace PRIVATE mpi ${CMAKE_DL_LIBS})
  target_compile_options(mpit_gpu_trace PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_target_properties(mpit_gpu_trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
  set(genv "${WH_CUDAEMU_ENV};WHARF_CUDA=1;CUDAEMU_VISIBLE=0,1;CUDAEMU_STREAM_DELAY_US=30;WHARF_REPORT=gpu,channels")
  add_test(NAME mpi.gpu.trace COMMAND ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_gpu_trace>)
  set_tests_properties(mpi.gpu.trace PROPERTIES
    ENVIRONMENT "${genv};WHARF_CUDA_TUNING=${CUEMU}/tuning-classes.txt"
    PASS_REGULAR_EXPRESSION "switch points from [^\n]*tuning-classes.txt: latency: [^\n]*cuda-ipc>=16384; bandwidth: [^\n]*pipeline>=16384, cuda-ipc>=524288(.*\n)*wharf: rank 0 gpu peer 1: class latency [^\n]*messages:[^\n]* cuda-ipc [1-9][0-9]*\nwharf: rank 0 gpu peer 2: class bandwidth [^\n]*messages:[^\n]* pipeline [1-9]"
    FAIL_REGULAR_EXPRESSION "check failed: ;gpu trace: FAILED;wharfrun: rank;rank 0 gpu peer 1:[^\n]* pipeline [1-9]"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 3)
  add_test(NAME mpi.gpu.trace_defaults COMMAND ${WHARFRUN} -n 3 --timeout 150 $<TARGET_FILE:mpit_gpu_trace>)
  set_tests_properties(mpi.gpu.trace_defaults PROPERTIES ENVIRONMENT "${genv}"
    PASS_REGULAR_EXPRESSION "switch points from defaults(.*\n)*wharf: rank 0 gpu peer 1: class latency [^\n]*messages:[^\n]* cuda-ipc [1-9][0-9]*\nwharf: rank 0 gpu peer 2: class bandwidth [^\n]*messages:[^\n]* cuda-ipc [1-9]"
    FAIL_REGULAR_EXPRESSION "check failed: ;gpu trace: FAILED;wharfrun: rank;pipeline [1-9]"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 3)
endif()

# Calibration: wharf-info --calibrate (2 ranks on the emulator) writes a
# tuning file that parses, and a following job loads it (its report shows
# the file's switch points).  Timing is not judged.
if(WH_CUDAEMU_OK)
  add_test(NAME mpi.gpu.calibrate COMMAND ${Python3_EXECUTABLE} ${CUEMU}/check_calib.py ${WHARFRUN}
           $<TARGET_FILE:wharf-info> $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(mpi.gpu.calibrate PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;CUDAEMU_VISIBLE=0,1"
    PASS_REGULAR_EXPRESSION "calibrate: ok" FAIL_REGULAR_EXPRESSION "calibrate: FAILED"
    TIMEOUT 400 LABELS "mpi;gpu;shm" PROCESSORS 2)
endif()

# The scheme the coordinator picks for co-resident ranks is CUDA IPC (the
# channel report must count it), and a failing IPC open falls back to staged
# copies with a log line, never a wrong answer.
if(WH_CUDAEMU_OK)
  # the net channel's provider is asked for FI_HMEM and the answer reported (tcp: no, staged)
  add_test(NAME mpi.gpu.net.hmem COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_gpu_kcache>)
  set_tests_properties(mpi.gpu.net.hmem PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_CHANNEL=net;WHARF_REPORT=locality;CUDAEMU_VISIBLE=0,1"
    PASS_REGULAR_EXPRESSION "net provider (does not offer|offers \\(not used yet\\)) FI_HMEM: device buffers"
    FAIL_REGULAR_EXPRESSION "check failed: ;FAILED;wharfrun: rank"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;net" PROCESSORS 2)
  # each rank's GPU with its NUMA node (topo4.txt: GPUs 0,1 on node 0, 2,3 on node 1), and per pair
  add_test(NAME mpi.gpu.locality_numa COMMAND ${WHARFRUN} -n 4 --timeout 150 $<TARGET_FILE:mpit_gpu_kcache>)
  set_tests_properties(mpi.gpu.locality_numa PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_REPORT=locality;CUDAEMU_TIMING=0"
    PASS_REGULAR_EXPRESSION "gpu rank 2: GPU-11111111-2222-3333-4444-000000000002 \\(pci 0000:88:00.0, NUMA node 1\\)[^\n]*\n(.*\n)*.*gpu pair 0<-1: peer GPUs[^\n]*both GPUs on NUMA node 0\n(.*\n)*.*gpu pair 0<-2: no peer access[^\n]*GPUs on NUMA nodes 0 and 1"
    FAIL_REGULAR_EXPRESSION "check failed: ;FAILED;wharfrun: rank"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 4)
  add_test(NAME mpi.gpu.ipc.scheme COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(mpi.gpu.ipc.scheme PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_REPORT=channels,locality;CUDAEMU_VISIBLE=0,1"
    PASS_REGULAR_EXPRESSION "gpu pair 0<-1: peer GPUs[^\n]*\n(.*\n)*.*shm/cuda-ipc [1-9][0-9]* msgs" FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;wharfrun: rank"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 2)
  add_test(NAME mpi.gpu.ipc.fallback COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(mpi.gpu.ipc.fallback PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_REPORT=channels;CUDAEMU_FAIL=cuIpcOpenMemHandle;CUDAEMU_VISIBLE=0,1"
    PASS_REGULAR_EXPRESSION "gpu p2p: ok"
    FAIL_REGULAR_EXPRESSION "check failed: ;gpu p2p: FAILED;cuda-ipc [1-9];wharfrun: rank"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 2)
  # the fallback must say so (a second run of the same, looking for the log line)
  add_test(NAME mpi.gpu.ipc.fallback_log COMMAND ${WHARFRUN} -n 2 --timeout 150 $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(mpi.gpu.ipc.fallback_log PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;CUDAEMU_FAIL=cuIpcOpenMemHandle;CUDAEMU_VISIBLE=0,1"
    PASS_REGULAR_EXPRESSION "CUDA IPC with rank [0-9]+ failed" TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm"
    PROCESSORS 2)
endif()

# The VMM file-descriptor scheme (src/mem/cuda/vmm.c): buffers from cuMemCreate
# (GPU_TEST_ALLOC=vmm) between co-resident ranks move as cuda-vmm (counted on
# its own in the channel report), never as legacy cuda-ipc; the tunable
# restricts the schemes; faults (the import refused, the import's mapping out
# of memory, asynchronous copies out of memory) fall back with a log line.
if(WH_CUDAEMU_OK)
  set(gpu_ok "check failed: ;gpu p2p: FAILED;gpu coll: FAILED;wharfrun: rank")
  foreach(cfg "vmm.scheme;gpu_p2p;GPU_TEST_ALLOC=vmm;shm/cuda-vmm [1-9][0-9]* msgs;cuda-ipc"
              "vmm.legacy_only;gpu_p2p;GPU_TEST_ALLOC=vmm,WHARF_CUDA_IPC_SCHEME=legacy;gpu p2p: ok;cuda-vmm;cuda-ipc"
              "vmm.only_vmm;gpu_p2p;WHARF_CUDA_IPC_SCHEME=vmm;gpu p2p: ok;cuda-vmm;cuda-ipc"
              "vmm.off;gpu_p2p;GPU_TEST_ALLOC=vmm,WHARF_CUDA_IPC=0;gpu p2p: ok;cuda-vmm;cuda-ipc"
              "vmm.fallback_import;gpu_p2p;GPU_TEST_ALLOC=vmm,CUDAEMU_FAIL=cuMemImportFromShareableHandle;VMM file descriptor. with rank [0-9]+ failed .CUDA_ERROR_INVALID_HANDLE;cuda-vmm [1-9]"
              "vmm.fallback_oom;gpu_p2p;GPU_TEST_ALLOC=vmm,CUDAEMU_FAIL=cuMemMap:imported;VMM file descriptor. with rank [0-9]+ failed .CUDA_ERROR_OUT_OF_MEMORY;cuda-vmm [1-9]"
              "copy_oom;gpu_p2p;CUDAEMU_FAIL=cuMemcpyAsync:oom;copies that do so are retried synchronously"
              "copy_oom_coll;gpu_coll;CUDAEMU_FAIL=cuMemcpyAsync:oom;copies that do so are retried synchronously")
    list(GET cfg 0 name)
    list(GET cfg 1 prog)
    list(GET cfg 2 env)
    list(GET cfg 3 pass)
    list(LENGTH cfg len)
    set(extra "")
    if(len GREATER 4)
      list(SUBLIST cfg 4 -1 extra)
    endif()
    string(REPLACE "," ";" env "${env}")
    set(np 2)
    if(prog STREQUAL "gpu_coll")
      set(np 3)
    endif()
    add_test(NAME mpi.gpu.${name} COMMAND ${WHARFRUN} -n ${np} --timeout 150 $<TARGET_FILE:mpit_${prog}>)
    set_tests_properties(mpi.gpu.${name} PROPERTIES
      ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_REPORT=channels;CUDAEMU_VISIBLE=0,1;CUDAEMU_TIMING=0;${env}"
      PASS_REGULAR_EXPRESSION "${pass}" FAIL_REGULAR_EXPRESSION "${gpu_ok};${extra}"
      TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS ${np})
  endforeach()
  # a node directory whose path is too long for a socket file: the abstract socket serves
  add_test(NAME mpi.gpu.vmm.abstract COMMAND sh -c "d=$(mktemp -d /tmp/whvmm.XXXXXX) && l=$d/$(printf '%0110d' 0) && mkdir $l && WHARF_NODE_DIR=$l \"$0\" -n 2 --timeout 150 \"$1\"; rc=$?; rm -rf $d; exit $rc"
           ${WHARFRUN} $<TARGET_FILE:mpit_gpu_p2p>)
  set_tests_properties(mpi.gpu.vmm.abstract PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;WHARF_REPORT=channels;WHARF_LOG=info;CUDAEMU_VISIBLE=0,1;CUDAEMU_TIMING=0;GPU_TEST_ALLOC=vmm"
    PASS_REGULAR_EXPRESSION "serving file descriptors on @wharf[^\n]*\n(.*\n)*.*shm/cuda-vmm [1-9]"
    FAIL_REGULAR_EXPRESSION "${gpu_ok};serving file descriptors on /"
    TIMEOUT ${WH_TEST_TIMEOUT} LABELS "mpi;gpu;shm" PROCESSORS 2)
  # every channel variant moves cuMemCreate buffers right (net: staged)
  wh_gpu_mpi_test(gpu.vmm_p2p ${CUEMU}/gpu_p2p.c 2 ENV "CUDAEMU_VISIBLE=0,1" "GPU_TEST_ALLOC=vmm"
                  "CUDAEMU_STREAM_DELAY_US=50")
endif()

# Device buffers between containers (docs/SCENARIOS.md).  With one GPU per
# container (containers.txt, by hostname) no container can map another's
# device memory: the GPU locality in the node registry says so and wharf
# does not try CUDA IPC (the pipeline or staged copies, no warning).  With both GPUs visible in every container (containers-2gpu.txt):
# shared (same PID namespace) moves device buffers by CUDA IPC; pidpriv cannot
# (the driver refuses handles from another PID namespace) and falls back;
# isolated and twohost go through the network, staged.  The _vmm variants
# allocate with cuMemCreate (GPU_TEST_ALLOC=vmm): the VMM file-descriptor
# scheme works in shared and pidpriv (the socket is a file in the shared
# /dev/shm), is refused with one GPU per container; the _fault variants inject
# a failure of the scheme the scenario uses (IPC open, the import's mapping
# running out of memory, asynchronous copies running out of memory): right
# data, the log line, never a wrong answer.
if(WH_CUDAEMU_OK)
  foreach(cfg "shared;2gpu;cuda;-;cuda-ipc [1-9]"
              "shared;1gpu;cuda;-;gpu peer [01]: .*GPU not visible here"
              "pidpriv;2gpu;cuda;-;gpu peer [01]: .*another PID namespace: no CUDA IPC"
              "isolated;1gpu;cuda;-;gpu p2p: ok"
              "twohost;1gpu;cuda;-;gpu p2p: ok"
              "volume;2gpu;cuda;-;gpu peer [01]: .*another PID namespace: no CUDA IPC"
              "shared;2gpu_vmm;vmm;-;shm/cuda-vmm [1-9]"
              "volume;2gpu_vmm;vmm;-;shm/cuda-vmm [1-9]"
              "pidpriv;2gpu_vmm;vmm;-;shm/cuda-vmm [1-9]"
              "shared;1gpu_vmm;vmm;-;gpu peer [01]: .*GPU not visible here"
              "isolated;1gpu_vmm;vmm;-;gpu p2p: ok"
              "twohost;1gpu_vmm;vmm;-;gpu p2p: ok"
              "shared;2gpu_fault;cuda;cuIpcOpenMemHandle;CUDA IPC with rank [0-9]+ failed"
              "pidpriv;2gpu_vmm_fault;vmm;cuMemMap:imported;VMM file descriptor. with rank [0-9]+ failed .CUDA_ERROR_OUT_OF_MEMORY"
              "isolated;1gpu_fault;cuda;cuMemcpyAsync:oom;copies that do so are retried synchronously"
              "twohost;1gpu_fault;cuda;cuMemcpyAsync:oom;copies that do so are retried synchronously")
    list(GET cfg 0 sc)
    list(GET cfg 1 gpus)
    list(GET cfg 2 alloc)
    list(GET cfg 3 fault)
    list(GET cfg 4 pass)
    set(np 2)
    if(sc STREQUAL "twohost")
      set(np 4)
    endif()
    set(vfile ${CUEMU}/containers.txt)
    if(gpus MATCHES "^2gpu")
      set(vfile ${CUEMU}/containers-2gpu.txt)
    endif()
    set(fail "check failed: ;gpu p2p: FAILED;wharfrun: rank")
    if(NOT gpus MATCHES "fault")
      list(APPEND fail "cudaemu: injected")
    endif()
    if(gpus MATCHES "fault|1gpu_vmm")
      list(APPEND fail "cuda-vmm [1-9];cuda-ipc [1-9]")
    endif()
    add_test(NAME scenarios.${sc}.gpu_p2p_${gpus}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scenarios/wharfns.py run ${sc} -n ${np}
              --wharfrun ${WHARFRUN} --timeout 150 --
              env LD_LIBRARY_PATH=${WH_CUDAEMU_DIR} CUDAEMU_TOPOLOGY=${CUEMU}/topo4.txt CUDAEMU_VISIBLE_FILE=${vfile}
              GPU_TEST_ALLOC=${alloc} CUDAEMU_FAIL=${fault} $<TARGET_FILE:mpit_gpu_p2p>)
    set_tests_properties(scenarios.${sc}.gpu_p2p_${gpus} PROPERTIES
      ENVIRONMENT "WHARF_CUDA=1;WHARF_REPORT=channels,gpu" SKIP_RETURN_CODE 77
      PASS_REGULAR_EXPRESSION "${pass}" FAIL_REGULAR_EXPRESSION "${fail}"
      LABELS "scenarios;gpu" RUN_SERIAL true TIMEOUT 240)
  endforeach()
endif()

# Windows over device memory between containers with one GPU each: shared
# memory (pidpriv), the network (isolated), both (twohost).
if(WH_CUDAEMU_OK)
  foreach(sc pidpriv isolated twohost)
    set(np 2)
    if(sc STREQUAL "twohost")
      set(np 4)
    endif()
    add_test(NAME scenarios.${sc}.gpu_rmawin
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scenarios/wharfns.py run ${sc} -n ${np}
              --wharfrun ${WHARFRUN} --timeout 150 --
              env LD_LIBRARY_PATH=${WH_CUDAEMU_DIR} CUDAEMU_TOPOLOGY=${CUEMU}/topo4.txt
              CUDAEMU_VISIBLE_FILE=${CUEMU}/containers.txt CUDAEMU_TIMING=0 $<TARGET_FILE:mpit_gpu_rmawin>)
    set_tests_properties(scenarios.${sc}.gpu_rmawin PROPERTIES
      ENVIRONMENT "WHARF_CUDA=1" SKIP_RETURN_CODE 77
      PASS_REGULAR_EXPRESSION "gpu rma windows: ok" FAIL_REGULAR_EXPRESSION "check failed: ;FAILED;wharfrun: rank"
      LABELS "scenarios;gpu" RUN_SERIAL true TIMEOUT 240)
  endforeach()
endif()

# The benchmark suite's device-buffer variants (-d cuda) build and run briefly
# on the emulated driver: latency, bandwidth, allreduce (speed is not judged).
if(WH_CUDAEMU_OK)
  add_test(NAME bench.cuda_smoke
    COMMAND sh -c "d=$(mktemp -d) && make -s -C \"$0/bench/suite\" MPICC=\"$1/bin/mpicc\" OUT=\"$d\" \"$d/wh_latency\" \"$d/wh_bw\" \"$d/wh_allreduce\" && for b in wh_latency wh_bw wh_allreduce; do \"$1/bin/wharfrun\" --timeout 100 -n 2 \"$d/$b\" -d cuda -m 1:16384 -i 5 -x 1 > \"$d/out\" 2>&1 && grep -q 'buffers: CUDA device memory' \"$d/out\" && grep -Eq '^16384 +[0-9.]+' \"$d/out\" || { cat \"$d/out\"; exit 1; }; done; rm -rf \"$d\""
            ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(bench.cuda_smoke PROPERTIES
    ENVIRONMENT "${WH_CUDAEMU_ENV};WHARF_CUDA=1;CUDAEMU_VISIBLE=0,1" LABELS "bench;gpu" TIMEOUT 300 PROCESSORS 2)
endif()
