# SPDX-License-Identifier: MIT
# The OpenCL backend (EMBER_OPENCL, on by default): OpenCL 1.2 through the
# ICD loader, opened with dlopen at run time. Building it needs no OpenCL
# headers or library; a machine without OpenCL simply has no opencl devices.
include(${CMAKE_CURRENT_LIST_DIR}/../kernels/kernels.cmake)
file(GLOB EMBER_OPENCL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
target_sources(ember_backends PRIVATE ${EMBER_OPENCL_SOURCES})
target_compile_definitions(ember_core PRIVATE EMBER_WITH_OPENCL)
message(STATUS "opencl backend: on (OpenCL is loaded at run time)")
