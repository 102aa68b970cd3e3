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
  foreach(t forward)
    add_executable(rgpu_${t} ${RGT}/t_${t}.c)
    target_include_directories(rgpu_${t} SYSTEM PRIVATE ${WH_CUDA_INC})
    target_compile_options(rgpu_${t} PRIVATE ${WH_WARN})
    target_link_libraries(rgpu_${t} PRIVATE cudaemu)
    set_target_properties(rgpu_${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${RGB} SKIP_BUILD_RPATH ON)
    add_dependencies(rgpu_${t} rgpu_kernels wharf-gpud rgpu_client)
  endforeach()
endif()
