# SPDX-License-Identifier: MIT
# The CPU backend: always built. OpenBLAS provides sgemm when found.
file(GLOB EMBER_CPU_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
ember_add_backend(cpu SOURCES ${EMBER_CPU_SOURCES} PREFERENCE 90)
# The loops never read errno or the floating-point exception flags: without
# errno sqrtf vectorises, and without trapping math a select whose arms
# compute (leaky ReLU's slope * x, the polynomial tanh's two halves) becomes
# a blend instead of a branch. Results are unchanged: rounding stays IEEE.
set_source_files_properties(${EMBER_CPU_SOURCES} PROPERTIES COMPILE_OPTIONS "-fno-math-errno;-fno-trapping-math")

if(WIN32)
  # PyPI's scipy-openblas32 (cmake/windows.cmake), its symbols prefixed scipy_ (cpu-blas.h)
  if(EMBER_WINDOWS_BLAS)
    message(STATUS "cpu backend: sgemm from PyPI's scipy-openblas32 (${EMBER_WINDOWS_OPENBLAS})")
    target_compile_definitions(ember_backends PRIVATE EMBER_HAVE_OPENBLAS)
    target_link_libraries(ember_backends PRIVATE ${EMBER_WINDOWS_BLAS})
    list(APPEND EMBER_LINK_LIBS ${EMBER_WINDOWS_BLAS})
  endif()
  return()
endif()
if(EMBER_OPENBLAS)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
  endif()
endif()
if(OPENBLAS_FOUND)
  message(STATUS "cpu backend: sgemm from OpenBLAS ${OPENBLAS_VERSION}")
  target_compile_definitions(ember_backends PRIVATE EMBER_HAVE_OPENBLAS)
  target_link_libraries(ember_backends PRIVATE PkgConfig::OPENBLAS)
  # an installed libember.a names it as the CMake package finds it again
  # (cmake/emberConfig.cmake.in), without the build's cache
  list(APPEND EMBER_LINK_LIBS $<BUILD_INTERFACE:PkgConfig::OPENBLAS> $<INSTALL_INTERFACE:PkgConfig::ember_openblas>)
else()
  message(STATUS "cpu backend: built-in sgemm (OpenBLAS not used; install libopenblas-dev)")
endif()
