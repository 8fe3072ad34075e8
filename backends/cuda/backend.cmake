# SPDX-License-Identifier: MIT
# The CUDA backend: built by default, since it needs nothing from CUDA to
# build. libcuda.so.1 and libnvrtc are opened at run time; the built-in PTX
# (baseline/<family>-sm30.ptx, made by scripts/baseline-ptx.sh) is joined
# into one module (baseline/combine.cmake) and embedded.
if(NOT EMBER_CUDA)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../kernels/kernels.cmake)
file(GLOB EMBER_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
file(GLOB EMBER_CUDA_BASELINE_PARTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/baseline/*-sm30.ptx)
set(EMBER_CUDA_BASELINE ${CMAKE_BINARY_DIR}/generated/kernels-sm30.ptx)
set(EMBER_CUDA_BASELINE_EMBEDDED ${CMAKE_BINARY_DIR}/generated/cuda-baseline-embedded.c)
add_custom_command(
  OUTPUT ${EMBER_CUDA_BASELINE}
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${EMBER_CUDA_BASELINE}" "-DFILES=${EMBER_CUDA_BASELINE_PARTS}"
          -P ${CMAKE_CURRENT_LIST_DIR}/baseline/combine.cmake
  DEPENDS ${EMBER_CUDA_BASELINE_PARTS} ${CMAKE_CURRENT_LIST_DIR}/baseline/combine.cmake
  COMMENT "Joining the built-in sm_30 PTX's files"
  VERBATIM)
add_custom_command(
  OUTPUT ${EMBER_CUDA_BASELINE_EMBEDDED}
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${EMBER_CUDA_BASELINE_EMBEDDED}" "-DFILES=${EMBER_CUDA_BASELINE}"
          -DNAME=ember_cuda_baseline -P ${CMAKE_CURRENT_LIST_DIR}/../kernels/embed.cmake
  DEPENDS ${EMBER_CUDA_BASELINE} ${CMAKE_CURRENT_LIST_DIR}/../kernels/embed.cmake
  COMMENT "Embedding the built-in sm_30 PTX"
  VERBATIM)
# first in auto's order; the simulated GPUs (ptxsim:N, cuda-sim.c) open only when named. Its
# suites run on cuda:0 on both kernel paths: NVRTC, and the built-in PTX forced
ember_add_backend(cuda SOURCES ${EMBER_CUDA_SOURCES} ${EMBER_CUDA_BASELINE_EMBEDDED} PREFERENCE 10
                  SIMULATED ember_ptxsim_backend
                  TEST_DEVICE cuda:0 TEST_VARIANTS nvrtc baseline TEST_VARIANT_ENV EMBER_CUDA_KERNELS TEST_TIMEOUT 300)
# without it, the kernel list's ember_ptx says there is no PTX to show (kernels/catalogue.c)
target_compile_definitions(ember_backends PRIVATE EMBER_WITH_CUDA)
message(STATUS "cuda backend: on (the driver and NVRTC are loaded at run time)")
