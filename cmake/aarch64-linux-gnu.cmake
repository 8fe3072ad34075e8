# SPDX-License-Identifier: MIT
# cmake/aarch64-linux-gnu.cmake — the toolchain for ember's 64-bit ARM build
# (Raspberry Pi 4 and 5, Jetsons), cross-compiled on Debian with
# gcc-aarch64-linux-gnu against Debian's arm64 packages installed beside the
# machine's own (multiarch; scripts/setup.sh --arm, docs/embedded.md):
#
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# The programs it makes run on any ARMv8-A Linux with glibc 2.36 or later,
# and here under qemu-user, which CMake uses to run them for ctest
# (CMAKE_CROSSCOMPILING_EMULATOR). An arm64 machine needs none of this: the
# README's commands build there as on x86.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(EMBER_CROSS_PREFIX aarch64-linux-gnu)
find_program(CMAKE_C_COMPILER NAMES ${EMBER_CROSS_PREFIX}-gcc REQUIRED)
# multiarch: the arm64 libraries and their pkg-config files live in
# /usr/lib/aarch64-linux-gnu, their headers in /usr/include with the machine's
set(CMAKE_LIBRARY_ARCHITECTURE ${EMBER_CROSS_PREFIX})
set(CMAKE_FIND_ROOT_PATH /usr/${EMBER_CROSS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${EMBER_CROSS_PREFIX}/pkgconfig:/usr/share/pkgconfig)
# Debian's qemu-user-static; the arm64 loader and libraries are found where
# multiarch put them, so it needs no -L
find_program(EMBER_QEMU NAMES qemu-aarch64-static qemu-aarch64)
if(EMBER_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EMBER_QEMU})
endif()
