# Remote GPUs (docs/RGPU.md): the server daemon wharf-gpud and the client
# driver (a libcuda.so.1 in build/lib/rgpu/).  Both are compiled against
# cuda.h (fetched with the emulator, tests/cudaemu), use OpenSSL's
# libcrypto for the HMAC-SHA256 authentication and libfabric for the
# fabric transport (rg_fab.c), loaded when first used (src/util/fabdl.c).
find_package(OpenSSL COMPONENTS Crypto)
set(WH_RGPU_OK OFF)
if(WH_CUDAEMU_OK AND OpenSSL_FOUND)
  set(WH_RGPU_OK ON)
  set(RGPU_SRC ${CMAKE_SOURCE_DIR}/src/rgpu)
  add_library(rgpu_wire STATIC ${RGPU_SRC}/rg_wire.c ${RGPU_SRC}/rg_auth.c ${RGPU_SRC}/rg_fab.c ${RGPU_SRC}/rg_plan.c
            $<TARGET_OBJECTS:wh_fabdl>)
  set_target_properties(rgpu_wire PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(rgpu_wire PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(rgpu_wire PRIVATE ${WH_WARN} -fvisibility=hidden)
  target_link_libraries(rgpu_wire PUBLIC OpenSSL::Crypto wh_fabric_headers ${CMAKE_DL_LIBS} Threads::Threads)

  add_executable(wharf-gpud ${RGPU_SRC}/gpud.c ${RGPU_SRC}/gpud_session.c ${RGPU_SRC}/gpud_peer.c ${RGPU_SRC}/gpud_gate.c
               ${RGPU_SRC}/rg_drv.c)
  target_include_directories(wharf-gpud SYSTEM PRIVATE ${WH_CUDA_INC})
  target_compile_options(wharf-gpud PRIVATE ${WH_WARN})
  target_link_libraries(wharf-gpud PRIVATE rgpu_wire ${CMAKE_DL_LIBS} Threads::Threads)

  add_library(rgpu_client SHARED ${RGPU_SRC}/client_core.c ${RGPU_SRC}/client_api.c ${RGPU_SRC}/client_proc.c
              ${CMAKE_SOURCE_DIR}/src/util/tunables.c) # (its own copy of the table, hidden: WHARF_RGPU_*)
  set_target_properties(rgpu_client PROPERTIES OUTPUT_NAME cuda SOVERSION 1
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/rgpu)
  target_include_directories(rgpu_client SYSTEM PRIVATE ${WH_CUDA_INC})
  target_compile_options(rgpu_client PRIVATE ${WH_WARN} -fvisibility=hidden)
  target_link_libraries(rgpu_client PRIVATE rgpu_wire Threads::Threads)
  target_link_options(rgpu_client PRIVATE -Wl,--exclude-libs,ALL)
else()
  message(STATUS "remote GPUs (rgpu) skipped: needs cuda.h (cudaemu) and OpenSSL's libcrypto (libssl-dev)")
endif()

if(WH_RGPU_OK)
  # the benchmark (bench/rgpu): a client of whichever libcuda.so.1 it is pointed at
  add_executable(rgpu_bench ${CMAKE_SOURCE_DIR}/bench/rgpu/rgpu_bench.c)
  target_include_directories(rgpu_bench SYSTEM PRIVATE ${WH_CUDA_INC})
  target_compile_options(rgpu_bench PRIVATE ${WH_WARN})
  target_link_libraries(rgpu_bench PRIVATE rgpu_wire cudaemu Threads::Threads)
  set_target_properties(rgpu_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench/rgpu SKIP_BUILD_RPATH ON)
endif()
