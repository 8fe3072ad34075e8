# SPDX-License-Identifier: MIT
# cmake -DOUTPUT=kernels-sm30.ptx -DFILES="a-sm30.ptx;b-sm30.ptx" -P combine.cmake
#
# Joins the built-in PTX's files, one per kernel family (made by
# scripts/baseline-ptx.sh), into the one module the CUDA backend loads:
# the first file's .version, .target and .address_size, the tuning
# constant (ember_tuning, the same in every file) once, then each file's
# kernels. Nothing else is declared at module level (clang demotes each
# kernel's shared arrays into it, and every helper is inlined:
# tests/gpu/test_ptx_budget.sh), so the kernels need no renaming.
if(NOT OUTPUT OR NOT FILES)
  message(FATAL_ERROR "usage: cmake -DOUTPUT=out.ptx -DFILES=\"a.ptx;b.ptx\" -P combine.cmake")
endif()
list(SORT FILES)
set(head "")
set(body "")
foreach(file IN LISTS FILES)
  file(STRINGS "${file}" lines)
  get_filename_component(name "${file}" NAME)
  string(APPEND body "\n// ---------------------------------------------------------------- ${name}\n")
  set(in_body OFF)
  foreach(line IN LISTS lines)
    if(NOT in_body)
      if(head STREQUAL "" AND line MATCHES "^\\.(version|target|address_size)")
        string(APPEND first "${line}\n")
      endif()
      if(line MATCHES "^\\.address_size")
        set(in_body ON)
      endif()
    elseif(line MATCHES "^\\.visible \\.const .* ember_tuning")
      set(tuning "${line}")
    else()
      string(APPEND body "${line}\n")
    endif()
  endforeach()
  if(head STREQUAL "")
    set(head "${first}")
  endif()
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "// ember's built-in kernels for sm_30: backends/cuda/baseline/*-sm30.ptx joined by\n"
  "// backends/cuda/baseline/combine.cmake; do not edit.\n\n"
  "${head}\n${tuning}\n${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
