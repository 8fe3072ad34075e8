# SPDX-License-Identifier: MIT
# tests/gpu/fakes/fake-cuda.cmake — the CUDA test double (fake_cuda.h) as the
# library fake-cuda, for the Linux tests (tests/gpu/CMakeLists.txt) and for the
# Windows build's under Wine (tests/windows/tests.cmake): ember's kernels in
# the host dialect, compiled once per tuning the CUDA backend uses, launched
# through tables gen-host-kernels writes at build time from the kernels' own
# signatures.
#
#   ember_fake_cuda([RUN command...])   RUN: what runs gen-host-kernels (Wine,
#                                       for the Windows build); else a cross
#                                       build's emulator (qemu for ARM), if any
function(ember_fake_cuda)
  cmake_parse_arguments(F "" "" "RUN" ${ARGN})
  if(NOT F_RUN)
    set(F_RUN ${CMAKE_CROSSCOMPILING_EMULATOR})
  endif()
  set(fakes ${PROJECT_SOURCE_DIR}/tests/gpu/fakes)
  add_executable(gen-host-kernels ${fakes}/gen-host-kernels.c)
  target_link_libraries(gen-host-kernels PRIVATE ember_static)
  target_include_directories(gen-host-kernels PRIVATE ${PROJECT_SOURCE_DIR}/base ${PROJECT_SOURCE_DIR}/backends)
  set(host_kernels)
  foreach(tuning default cuda-nvrtc)
    string(REPLACE "-" "_" name ${tuning})
    set(file ${CMAKE_CURRENT_BINARY_DIR}/host-kernels-${tuning}.c)
    add_custom_command(OUTPUT ${file}
                       COMMAND ${F_RUN} $<TARGET_FILE:gen-host-kernels> ${name} ${tuning} > ${file}
                       DEPENDS gen-host-kernels
                       COMMENT "The kernels for the CUDA test double, tuning ${tuning}"
                       VERBATIM)
    list(APPEND host_kernels ${file})
  endforeach()
  # its PTX mode runs modules in ember's PTX simulator, built again here for it alone: its
  # symbols stay inside the double, apart from the copy in libember the tests link
  add_library(ptxsim-double STATIC ${EMBER_PTXSIM_SOURCES})
  target_compile_options(ptxsim-double PRIVATE ${EMBER_PTXSIM_OPTIONS})
  if(NOT WIN32)
    target_compile_options(ptxsim-double PRIVATE -fvisibility=hidden)
  endif()
  add_library(fake-cuda SHARED ${fakes}/fake_cuda_driver.c ${fakes}/fake_cuda_module.c ${fakes}/fake_cuda_exec.c
              ${fakes}/fake_cuda_checks.c
              ${host_kernels})
  target_include_directories(fake-cuda PRIVATE ${fakes} ${PROJECT_SOURCE_DIR}/base ${PROJECT_SOURCE_DIR}/backends)
  target_link_libraries(fake-cuda PRIVATE ptxsim-double Threads::Threads)
  if(NOT WIN32)
    target_link_libraries(fake-cuda PRIVATE m)
  endif()
  # kernels at full speed in every build type; int arithmetic wraps as on a GPU; the fibers
  # switch stacks with __builtin_longjmp, which _FORTIFY_SOURCE's checked longjmp would refuse
  target_compile_options(fake-cuda PRIVATE -O2 -fwrapv -U_FORTIFY_SOURCE)
endfunction()
