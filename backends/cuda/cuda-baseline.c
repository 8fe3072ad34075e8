/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-baseline.c — the built-in PTX: every kernel of
 * backends/kernels compiled for `.target sm_30` by Debian's clang, no CUDA
 * installation involved, and kept in the repository as one file per
 * kernel family, backends/cuda/baseline/<family>-sm30.ptx, which the build
 * joins into one module (baseline/combine.cmake). Every driver since CUDA
 * 5.5 JITs it for any GPU from Kepler up, with no NVRTC at all.
 *
 * It is made by scripts/baseline-ptx.sh (a documented, reproducible
 * command), embedded by CMake, and tests/gpu/test_baseline_ptx.sh fails when
 * a file no longer matches what the kernel sources give.
 */
#include <stdio.h>
#include <string.h>

#include "cuda-impl.h"

/* from cuda-baseline-embedded.c, generated at build time */
struct ember_cuda_baseline {
    const char *name;
    const char *text;
};
extern const struct ember_cuda_baseline ember_cuda_baseline_files[];
extern const int ember_cuda_baseline_count;

const char *cuda_baseline_ptx(void)
{
    return ember_cuda_baseline_count > 0 ? ember_cuda_baseline_files[0].text : "";
}

int cuda_ptx_isa_in(const char *ptx)
{
    const char *v = strstr(ptx, "\n.version ");
    int major = 0, minor = 0;
    if (!v || sscanf(v, "\n.version %d.%d", &major, &minor) != 2)
        return 0;
    return major * 10 + minor;
}
