# SPDX-License-Identifier: MIT
# The tests of the Windows build, run under Wine (CMAKE_CROSSCOMPILING_EMULATOR,
# cmake/mingw-w64.cmake): docs/windows.md says which, and why these.
ember_test(test_tensor SOURCES unit/test_tensor.c LABELS unit)
ember_test(test_platform SOURCES unit/test_platform.c LABELS unit)
ember_test(test_gradcheck SOURCES ops/test_gradcheck.c ops/reference.c LABELS ops)
ember_test(test_parity SOURCES ops/test_parity.c ops/reference.c LABELS ops)
ember_test(test_schedule SOURCES unit/test_schedule.c LABELS unit)
ember_test(test_loaders SOURCES unit/test_loaders.c LABELS unit)
target_include_directories(test_loaders PRIVATE ${STB_INCLUDE_DIR})
ember_test(test_models SOURCES unit/test_models.c LABELS "unit;models")
ember_test(test_text SOURCES unit/test_text.c LABELS "unit;models")
ember_test(test_checkpoint SOURCES unit/test_checkpoint.c LABELS unit)
ember_test(test_memory SOURCES unit/test_memory.c LABELS unit)
# a GPU backend trains as the CPU does (the OpenCL run below, the CUDA double's further down)
# (Debian's Fashion-MNIST, on Wine's drive Z:)
set(EMBER_WINDOWS_FASHION --data-dir /usr/share/datasets/fashion-mnist)
ember_test(test_backend_e2e SOURCES gpu/test_backend_e2e.c LABELS "e2e;opencl" ARGS opencl:0 --steps 200
           ${EMBER_WINDOWS_FASHION} TIMEOUT 600)
set_tests_properties(test_backend_e2e PROPERTIES ENVIRONMENT "EMBER_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# for test_wine_cli.sh: a file held open as another program holds it
add_executable(hold_open windows/hold_open.c)
# the OpenCL backend through Wine's opencl.dll, which hands it to the Linux
# side's libOpenCL (PoCL in CI): every primitive against the reference
add_test(NAME test_parity_opencl COMMAND test_parity -b opencl)
set_tests_properties(test_parity_opencl PROPERTIES LABELS "ops;opencl" SKIP_RETURN_CODE 77 TIMEOUT 600
                     ENVIRONMENT "EMBER_TEST_DEVICE=opencl:0;EMBER_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")

# The CUDA backend through its test double (tests/gpu/fakes), built as a
# Windows DLL that ember loads in place of nvcuda.dll (EMBER_CUDA_LIBRARY):
# ember's kernels compiled for the host and run on the CPU, with fibers for
# the work-items, guard pages around each allocation and the fault caught.
# Its kernel tables come from gen-host-kernels, run under Wine at build
# time. Three GPUs as ember meets them: an H100 on the built-in PTX, a K40m
# with NVIDIA's NVRTC 11.8 for Windows, and a K2100M whose PTX the double
# runs in its PTX simulator.
if(EMBER_CUDA)
  include(${PROJECT_SOURCE_DIR}/tests/gpu/fakes/fake-cuda.cmake)
  ember_fake_cuda(RUN ${CMAKE_COMMAND} -E env WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix WINEDEBUG=-all
                  "WINEDLLOVERRIDES=mscoree,mshtml=" ${CMAKE_CROSSCOMPILING_EMULATOR})
  set(EMBER_WINDOWS_DOUBLE_ENV "EMBER_CUDA_LIBRARY=$<TARGET_FILE:fake-cuda>;EMBER_TEST_DEVICE=cuda:0"
                               "EMBER_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  # the double itself, its faults caught by the vectored exception handler included
  ember_test(test_cuda_double SOURCES gpu/test_cuda_double.c LABELS "unit;cuda;double" ARGS $<TARGET_FILE:fake-cuda>)
  set_tests_properties(test_cuda_double PROPERTIES ENVIRONMENT "EMBER_NVRTC=none")
  # an H100 on the built-in PTX (no NVRTC): every primitive, the gradients, the models
  add_test(NAME test_parity_cuda_double COMMAND test_parity -b cuda)
  add_test(NAME test_gradcheck_cuda_double COMMAND test_gradcheck)
  add_test(NAME test_models_cuda_double COMMAND test_models)
  set(env ${EMBER_WINDOWS_DOUBLE_ENV} EMBER_CUDA_KERNELS=baseline EMBER_NVRTC=none
      "EMBER_FAKE_CUDA_GPUS=90:H100 (CUDA test double)" EMBER_FAKE_CUDA_DRIVER=13000)
  set_tests_properties(test_parity_cuda_double test_gradcheck_cuda_double test_models_cuda_double PROPERTIES
                       ENVIRONMENT "${env}")
  # a K40m on an R470 driver, its kernels compiled by NVIDIA's NVRTC 11.8 for Windows
  # (nvrtc64_112_0.dll, which scripts/windows-deps.sh --tests fetches) into a cubin for sm_35
  add_test(NAME test_parity_cuda_double_k40m_cu11 COMMAND test_parity -b cuda)
  set(env ${EMBER_WINDOWS_DOUBLE_ENV} EMBER_CUDA_KERNELS=nvrtc-cubin
      EMBER_NVRTC=only:${EMBER_WINDOWS_DEPS}/cu11/nvidia/cuda_nvrtc/bin
      "EMBER_FAKE_CUDA_GPUS=35:Tesla K40m (CUDA test double)" EMBER_FAKE_CUDA_DRIVER=11040)
  set_tests_properties(test_parity_cuda_double_k40m_cu11 PROPERTIES ENVIRONMENT "${env}")
  # a Quadro K2100M on R418: the built-in sm_30 PTX itself executed by the PTX simulator
  # inside the double, with its checks (bounds, races, barriers)
  add_test(NAME test_parity_cuda_double_k2100m_ptx COMMAND test_parity -b cuda)
  set(env ${EMBER_WINDOWS_DOUBLE_ENV} EMBER_CUDA_KERNELS=baseline EMBER_NVRTC=none EMBER_FAKE_CUDA_EXEC=ptx
      "EMBER_FAKE_CUDA_GPUS=30:Quadro K2100M (CUDA test double)" EMBER_FAKE_CUDA_DRIVER=10010)
  set_tests_properties(test_parity_cuda_double_k2100m_ptx PROPERTIES ENVIRONMENT "${env}")
  # 200 steps of simplecnn on the double's H100 and on the CPU side by side, then the test accuracy
  add_test(NAME test_backend_e2e_cuda_double COMMAND test_backend_e2e cuda:0 --steps 200 ${EMBER_WINDOWS_FASHION})
  set(env ${EMBER_WINDOWS_DOUBLE_ENV} EMBER_CUDA_KERNELS=baseline EMBER_NVRTC=none
      "EMBER_FAKE_CUDA_GPUS=90:H100 (CUDA test double)" EMBER_FAKE_CUDA_DRIVER=13000)
  set_tests_properties(test_backend_e2e_cuda_double PROPERTIES ENVIRONMENT "${env}")
  set_tests_properties(test_parity_cuda_double test_gradcheck_cuda_double test_models_cuda_double
                       test_parity_cuda_double_k40m_cu11 test_parity_cuda_double_k2100m_ptx
                       test_backend_e2e_cuda_double PROPERTIES
                       LABELS "ops;cuda;double" SKIP_RETURN_CODE 77 TIMEOUT 600)
  set_tests_properties(test_backend_e2e_cuda_double PROPERTIES LABELS "e2e;cuda;double")
endif()

# Wine finds the OpenBLAS DLL through WINEPATH (Z: is the root of the Linux
# file system), in the prefix the test script made; and says nothing of its own
get_property(EMBER_WINDOWS_TESTS DIRECTORY PROPERTY TESTS)
set_property(TEST ${EMBER_WINDOWS_TESTS} APPEND PROPERTY ENVIRONMENT "WINEPATH=Z:${EMBER_WINDOWS_OPENBLAS}/bin"
             "WINEDEBUG=-all" "WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix")
