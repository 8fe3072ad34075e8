# SPDX-License-Identifier: MIT
# The CUDA backend: built by default, since it needs nothing from CUDA to
# build. libcuda.so.1 and libnvrtc are opened at run time; the built-in PTX
# (baseline/kernels-sm30.ptx, made by scripts/baseline-ptx.sh) is embedded.
include(${CMAKE_CURRENT_LIST_DIR}/../kernels/kernels.cmake)
file(GLOB EMBER_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
set(EMBER_CUDA_BASELINE ${CMAKE_CURRENT_LIST_DIR}/baseline/kernels-sm30.ptx)
set(EMBER_CUDA_BASELINE_EMBEDDED ${CMAKE_BINARY_DIR}/generated/cuda-baseline-embedded.c)
add_custom_command(
  OUTPUT ${EMBER_CUDA_BASELINE_EMBEDDED}
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${EMBER_CUDA_BASELINE_EMBEDDED}" "-DFILES=${EMBER_CUDA_BASELINE}"
          -DNAME=ember_cuda_baseline -P ${CMAKE_CURRENT_LIST_DIR}/../kernels/embed.cmake
  DEPENDS ${EMBER_CUDA_BASELINE} ${CMAKE_CURRENT_LIST_DIR}/../kernels/embed.cmake
  COMMENT "Embedding the built-in sm_30 PTX"
  VERBATIM)
target_sources(ember_backends PRIVATE ${EMBER_CUDA_SOURCES} ${EMBER_CUDA_BASELINE_EMBEDDED})
target_compile_definitions(ember_backends PRIVATE EMBER_WITH_CUDA)
target_compile_definitions(ember_core PRIVATE EMBER_WITH_CUDA)
