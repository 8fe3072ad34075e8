# SPDX-License-Identifier: MIT
# The tests of the Windows build, run under Wine (CMAKE_CROSSCOMPILING_EMULATOR,
# cmake/mingw-w64.cmake): docs/windows.md says which, and why these.
ember_test(test_tensor SOURCES test_tensor.c LABELS unit)
ember_test(test_platform SOURCES test_platform.c LABELS unit)
