# SPDX-License-Identifier: MIT
# The tests of the Windows build, run under Wine (CMAKE_CROSSCOMPILING_EMULATOR,
# cmake/mingw-w64.cmake): docs/windows.md says which, and why these.
ember_test(test_tensor SOURCES unit/test_tensor.c LABELS unit)
ember_test(test_platform SOURCES unit/test_platform.c LABELS unit)
ember_test(test_gradcheck SOURCES ops/test_gradcheck.c LABELS ops)
ember_test(test_parity SOURCES ops/test_parity.c ops/reference.c LABELS ops)
ember_test(test_schedule SOURCES unit/test_schedule.c LABELS unit)
ember_test(test_loaders SOURCES unit/test_loaders.c LABELS unit)
target_include_directories(test_loaders PRIVATE ${STB_INCLUDE_DIR})
ember_test(test_models SOURCES unit/test_models.c LABELS "unit;models")
ember_test(test_text SOURCES unit/test_text.c LABELS "unit;models")
ember_test(test_checkpoint SOURCES unit/test_checkpoint.c LABELS unit)
ember_test(test_memory SOURCES unit/test_memory.c LABELS unit)
# for test_wine_cli.sh: a file held open as another program holds it
add_executable(hold_open windows/hold_open.c)
# the OpenCL backend through Wine's opencl.dll, which hands it to the Linux
# side's libOpenCL (PoCL in CI): every primitive against the reference
add_test(NAME test_parity_opencl COMMAND test_parity -b opencl)
set_tests_properties(test_parity_opencl PROPERTIES LABELS "ops;opencl" SKIP_RETURN_CODE 77 TIMEOUT 600
                     ENVIRONMENT "EMBER_TEST_DEVICE=opencl:0;EMBER_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")

# Wine finds the OpenBLAS DLL through WINEPATH (Z: is the root of the Linux
# file system), in the prefix the test script made; and says nothing of its own
get_property(EMBER_WINDOWS_TESTS DIRECTORY PROPERTY TESTS)
set_property(TEST ${EMBER_WINDOWS_TESTS} APPEND PROPERTY ENVIRONMENT "WINEPATH=Z:${EMBER_WINDOWS_OPENBLAS}/bin"
             "WINEDEBUG=-all" "WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix")
