/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-simd.c — which vector instructions ember's hand-written
 * CPU kernels may use (cpu-impl.h says who asks, and EMBER_CPU_SIMD).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-impl.h"

enum cpu_simd cpu_simd(void)
{
    static int known = -1; /* racing threads store the same answer */
    if (known < 0) {
        int level = CPU_SIMD_NONE;
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            level = __builtin_cpu_supports("avx512f") ? CPU_SIMD_AVX512 : CPU_SIMD_AVX2;
#elif defined(__aarch64__) && defined(__GNUC__)
        level = CPU_SIMD_NEON; /* part of ARMv8-A: every 64-bit ARM core has it */
#endif
        const char *cap = getenv("EMBER_CPU_SIMD");
        if (cap && strcmp(cap, "none") == 0)
            level = CPU_SIMD_NONE;
        else if (cap && strcmp(cap, "avx2") == 0 && level > CPU_SIMD_AVX2)
            level = CPU_SIMD_AVX2;
        known = level;
    }
    return (enum cpu_simd)known;
}
