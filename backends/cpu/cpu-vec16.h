/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-vec16.h — sixteen floats a vector: AVX-512 on x86-64,
 * with the same functions as cpu-vec8.h's eight, so that a kernel written
 * once on the names of cpu-vec.h is compiled for both widths.
 *
 * The functions are compiled for AVX-512F (VEC16_FN), which the build does
 * not assume: cpu_simd() says CPU_SIMD_AVX512 when the CPU has it and
 * EMBER_CPU_SIMD allows it. Every CPU with AVX-512F also has AVX2, FMA
 * and F16C, so the kernels built on these may use them too (cpu-quant.c
 * turns half-precision scales into floats with F16C).
 *
 * A vector of 16 is two of vec8's lanes side by side, but a kernel that
 * sums a vector's lanes gets other bits than on vec8: the lanes are added
 * in another order (vec16_sum).
 */
#ifndef EMBER_CPU_VEC16_H
#define EMBER_CPU_VEC16_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CPU_VEC16    1
#define VEC16_FN     __attribute__((target("avx512f,avx2,fma,f16c")))
#define VEC16_INLINE static inline __attribute__((always_inline, target("avx512f,avx2,fma,f16c")))

typedef __m512 vec16;

VEC16_INLINE vec16 vec16_zero(void) { return _mm512_setzero_ps(); }
VEC16_INLINE vec16 vec16_load(const float *p) { return _mm512_loadu_ps(p); }
VEC16_INLINE void vec16_store(float *p, vec16 v) { _mm512_storeu_ps(p, v); }
/* every lane *p */
VEC16_INLINE vec16 vec16_splat(const float *p) { return _mm512_set1_ps(*p); }
VEC16_INLINE vec16 vec16_set1(float v) { return _mm512_set1_ps(v); }
VEC16_INLINE vec16 vec16_add(vec16 a, vec16 b) { return _mm512_add_ps(a, b); }
VEC16_INLINE vec16 vec16_mul(vec16 a, vec16 b) { return _mm512_mul_ps(a, b); }
/* a * b + c, rounded once */
VEC16_INLINE vec16 vec16_fma(vec16 a, vec16 b, vec16 c) { return _mm512_fmadd_ps(a, b, c); }
/* the lanes' sum, in the compiler's order of halves */
VEC16_INLINE float vec16_sum(vec16 v) { return _mm512_reduce_add_ps(v); }
/* lanes [0, 16) that lie before `left` */
VEC16_INLINE __mmask16 vec16_lanes_before(int64_t left)
{
    int32_t l = left > 16 ? 16 : left < 0 ? 0 : (int32_t)left;
    return _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(l),
                                   _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
/* the first `left` floats at p (all 16 when left >= 16), zeros after; the
 * rest are not read (a masked lane cannot fault) */
VEC16_INLINE vec16 vec16_load_first(const float *p, int64_t left)
{
    return _mm512_maskz_loadu_ps(vec16_lanes_before(left), p);
}
/* stores the first `left` lanes (all 16 when left >= 16); the rest of p untouched */
VEC16_INLINE void vec16_store_first(float *p, vec16 v, int64_t left)
{
    _mm512_mask_storeu_ps(p, vec16_lanes_before(left), v);
}
/* A quantised block's 32 integers as floats, in two vec16 (backends/quant.h):
 * 32 signed bytes (Q8_0), or 16 bytes of 4-bit halves whose low halves are
 * weights 0-15 and high halves 16-31 (Q4_0, Q4_1) */
VEC16_INLINE void vec16_from_i8x32(const uint8_t *p, vec16 w[2])
{
    for (int c = 0; c < 2; c++)
        w[c] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p + 16 * c))));
}
VEC16_INLINE void vec16_from_u4x32(const uint8_t *p, vec16 w[2])
{
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i raw = _mm_loadu_si128((const __m128i *)p);
    w[0] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(raw, low4)));
    w[1] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)));
}

#else
#define CPU_VEC16 0
#endif

#endif /* EMBER_CPU_VEC16_H */
