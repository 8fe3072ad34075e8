# SPDX-License-Identifier: MIT
# ptxsim/ptxsim.cmake — the PTX simulator (ptxsim.h), a library of its own that needs nothing
# but libc and libm. It goes into ember with the CUDA backend (the simulated GPUs of
# backends/cuda/cuda-sim.c, `ember ptx --simulate`); tests/CMakeLists.txt builds it again
# for the CUDA test double, which runs modules through it.
include_guard(GLOBAL)
file(GLOB EMBER_PTXSIM_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
set(EMBER_PTXSIM_DIR ${CMAKE_CURRENT_LIST_DIR})
# instructions with .rz, .rm or .rp switch the host's rounding mode around their loop:
# the compiler must not fold or move float arithmetic across that. -O2 in every build type:
# the Debug sanitizer build's tests execute millions of warp instructions through it.
# -ffp-contract=off: a multiply and an add in the simulator's C stay two roundings, as
# PTXSIM_UNFUSED promises.
set(EMBER_PTXSIM_OPTIONS -O2 -frounding-math -ffp-contract=off)
ember_layer(ember_ptxsim SOURCES ${EMBER_PTXSIM_SOURCES} SEES ptxsim)
target_compile_options(ember_ptxsim PRIVATE ${EMBER_PTXSIM_OPTIONS})
