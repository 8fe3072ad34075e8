# SPDX-License-Identifier: MIT
# The OpenCL backend (EMBER_OPENCL, on by default): OpenCL 1.2 through the
# ICD loader, opened with dlopen at run time. Building it needs no OpenCL
# headers or library; a machine without OpenCL simply has no opencl devices.
if(NOT EMBER_OPENCL)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../kernels/kernels.cmake)
file(GLOB EMBER_OPENCL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
# after CUDA in auto's order; its suites run on opencl:0 (PoCL in CI)
ember_add_backend(opencl SOURCES ${EMBER_OPENCL_SOURCES} PREFERENCE 20 TEST_DEVICE opencl:0)
message(STATUS "opencl backend: on (OpenCL is loaded at run time)")
