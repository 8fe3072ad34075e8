# SPDX-License-Identifier: MIT
# The shared kernel sources (backends/kernels), for every GPU backend.
#
# kernels.c and, generated at build time by embed.cmake, kernels-embedded.c
# holding every .kh and .kc file here as a string: no tool but CMake; and
# gpu-*.c, the host side every GPU backend shares (gpu.h). A backend's
# backend.cmake includes this file; it adds the sources once.
include_guard(GLOBAL)

set(EMBER_KERNELS_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR})
file(GLOB EMBER_KERNEL_FILES CONFIGURE_DEPENDS ${EMBER_KERNELS_SOURCE_DIR}/*.kh ${EMBER_KERNELS_SOURCE_DIR}/*.kc)
set(EMBER_KERNELS_EMBEDDED ${CMAKE_BINARY_DIR}/generated/kernels-embedded.c)
add_custom_command(
  OUTPUT ${EMBER_KERNELS_EMBEDDED}
  COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${EMBER_KERNELS_EMBEDDED}" "-DFILES=${EMBER_KERNEL_FILES}"
          -P ${EMBER_KERNELS_SOURCE_DIR}/embed.cmake
  DEPENDS ${EMBER_KERNEL_FILES} ${EMBER_KERNELS_SOURCE_DIR}/embed.cmake
  COMMENT "Embedding the kernel sources"
  VERBATIM)
file(GLOB EMBER_GPU_SOURCES CONFIGURE_DEPENDS ${EMBER_KERNELS_SOURCE_DIR}/gpu-*.c)
target_sources(ember_backends PRIVATE ${EMBER_KERNELS_SOURCE_DIR}/kernels.c ${EMBER_GPU_SOURCES}
                                     ${EMBER_KERNELS_EMBEDDED})
set(EMBER_HAVE_KERNELS ON)
