# SPDX-License-Identifier: MIT
# cmake/mingw-w64.cmake — the toolchain for ember's Windows build, cross-compiled
# on Debian with mingw-w64 (docs/windows.md):
#
#   cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake
#
# The programs it makes run on 64-bit Windows 7 and later, and here under
# Wine, which CMake uses to run them for ctest (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(EMBER_MINGW_PREFIX x86_64-w64-mingw32)
# Debian's -posix variant: winpthreads for C11 threads and pthreads, which the
# CPU backend's workers use on both systems
find_program(CMAKE_C_COMPILER NAMES ${EMBER_MINGW_PREFIX}-gcc-posix ${EMBER_MINGW_PREFIX}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${EMBER_MINGW_PREFIX}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${EMBER_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(EMBER_WINE NAMES wine)
if(EMBER_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EMBER_WINE})
endif()
