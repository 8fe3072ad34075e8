# SPDX-License-Identifier: MIT
# cmake/windows.cmake — what the Windows build (cmake/mingw-w64.cmake, from
# Debian) uses in place of Linux's libraries; docs/windows.md.
#
#   PNG and JPEG   Windows Imaging Component, the system's own decoders
#                  (io/image-wic.c), in place of libpng and libjpeg-turbo
#   OpenBLAS       PyPI's scipy-openblas32 wheel for win_amd64, which
#                  scripts/windows-deps.sh unpacks into EMBER_WINDOWS_DEPS
#   zlib           Debian's libz-mingw-w64-dev, linked statically
#   threads        mingw-w64's winpthreads (the -posix compiler), static
#
# Included by CMakeLists.txt when WIN32, before the library's targets.
enable_language(RC) # ember.exe's manifest (tools/ember.rc)
set(EMBER_WINDOWS_DEPS "${CMAKE_BINARY_DIR}/deps" CACHE PATH "Where scripts/windows-deps.sh put OpenBLAS")
# %zu and %lld in ember's messages: mingw-w64's own printf rather than the
# old msvcrt.dll one, which knows neither (and format checks that know it)
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1 _WIN32_WINNT=0x0601 WIN32_LEAN_AND_MEAN)
# one struct stat everywhere, with 64-bit sizes: mingw-w64 changes its
# layout with _FILE_OFFSET_BITS, which a file that sets it for itself
# (safetensors.c) would otherwise read differently from the rest
add_compile_definitions(_FILE_OFFSET_BITS=64)
# GCC checks ember's own printf-like functions (format(printf)) as msvcrt's
# printf, which has no %zu: the Linux build checks every format, this one
# would only repeat it wrongly
add_compile_options(-Wno-format)
# one file of the program, no libgcc or winpthread DLL beside it
add_link_options(-static)
set(ZLIB_USE_STATIC_LIBS ON)
set(EMBER_WINDOWS_LIBS ole32 windowscodecs uuid shell32)

set(EMBER_WINDOWS_OPENBLAS "${EMBER_WINDOWS_DEPS}/openblas")
if(EMBER_OPENBLAS AND EXISTS "${EMBER_WINDOWS_OPENBLAS}/lib/libscipy_openblas.lib")
  add_library(ember_scipy_openblas SHARED IMPORTED)
  set_target_properties(ember_scipy_openblas PROPERTIES
    IMPORTED_LOCATION "${EMBER_WINDOWS_OPENBLAS}/bin/libscipy_openblas.dll"
    IMPORTED_IMPLIB "${EMBER_WINDOWS_OPENBLAS}/lib/libscipy_openblas.lib"
    INTERFACE_INCLUDE_DIRECTORIES "${EMBER_WINDOWS_OPENBLAS}/include"
    INTERFACE_COMPILE_DEFINITIONS EMBER_BLAS_PREFIX_SCIPY)
  set(EMBER_WINDOWS_BLAS ember_scipy_openblas)
elseif(EMBER_OPENBLAS)
  message(STATUS "cpu backend: no OpenBLAS in ${EMBER_WINDOWS_OPENBLAS} (run scripts/windows-deps.sh); built-in sgemm")
endif()
