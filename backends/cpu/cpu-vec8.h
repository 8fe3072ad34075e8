/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-vec8.h — eight floats a vector, for the hand-written
 * kernels that run on x86-64 with AVX2 and FMA and on 64-bit ARM with NEON
 * (cpu-gemm-skinny.c; cpu-conv-direct.c's and cpu-quant.c's through
 * cpu-vec.h, which compiles them for cpu-vec16.h's AVX-512 too): each
 * kernel is written once and compiled for both.
 *
 *   x86-64   one __m256; the functions are compiled for AVX2 and FMA alone
 *            (VEC8_FN), which the build does not assume: cpu_simd() says
 *            when the CPU has them
 *   aarch64  two float32x4_t; NEON is part of every ARMv8-A core, so the
 *            functions need no attribute, and cpu_simd() says CPU_SIMD_NEON
 *            unless EMBER_CPU_SIMD=none
 *
 * Both multiply and add in one rounding (FMA), and vec8_sum adds the lanes
 * in the same order, so a kernel gives the same bits on either.
 */
#ifndef EMBER_CPU_VEC8_H
#define EMBER_CPU_VEC8_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CPU_VEC8    1
#define VEC8_FN     __attribute__((target("avx2,fma")))
#define VEC8_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

typedef __m256 vec8;

VEC8_INLINE vec8 vec8_zero(void) { return _mm256_setzero_ps(); }
VEC8_INLINE vec8 vec8_load(const float *p) { return _mm256_loadu_ps(p); }
VEC8_INLINE void vec8_store(float *p, vec8 v) { _mm256_storeu_ps(p, v); }
/* every lane *p */
VEC8_INLINE vec8 vec8_splat(const float *p) { return _mm256_broadcast_ss(p); }
VEC8_INLINE vec8 vec8_set1(float v) { return _mm256_set1_ps(v); }
VEC8_INLINE vec8 vec8_add(vec8 a, vec8 b) { return _mm256_add_ps(a, b); }
VEC8_INLINE vec8 vec8_mul(vec8 a, vec8 b) { return _mm256_mul_ps(a, b); }
/* a * b + c, rounded once */
VEC8_INLINE vec8 vec8_fma(vec8 a, vec8 b, vec8 c) { return _mm256_fmadd_ps(a, b, c); }
/* the lanes' sum: the halves added, then (0 + 2) + (1 + 3) */
VEC8_INLINE float vec8_sum(vec8 v)
{
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}
/* lanes [0, 8) that lie before `left` */
VEC8_INLINE __m256i vec8_lanes_before(int64_t left)
{
    int32_t l = left > 8 ? 8 : left < 0 ? 0 : (int32_t)left;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(l), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* the first `left` floats at p (all 8 when left >= 8), zeros after; the
 * rest are not read */
VEC8_INLINE vec8 vec8_load_first(const float *p, int64_t left)
{
    return _mm256_maskload_ps(p, vec8_lanes_before(left));
}
/* stores the first `left` lanes (all 8 when left >= 8); the rest of p untouched */
VEC8_INLINE void vec8_store_first(float *p, vec8 v, int64_t left)
{
    _mm256_maskstore_ps(p, vec8_lanes_before(left), v);
}
/* a hint that p will be read soon */
VEC8_INLINE void vec8_prefetch(const float *p) { _mm_prefetch((const char *)p, _MM_HINT_T0); }
/* A quantised block's 32 integers as floats, in four vec8 (backends/quant.h):
 * 32 signed bytes (Q8_0), or 16 bytes of 4-bit halves whose low halves are
 * weights 0-15 and high halves 16-31 (Q4_0, Q4_1) */
VEC8_INLINE void vec8_from_i8x32(const uint8_t *p, vec8 w[4])
{
    for (int c = 0; c < 4; c++)
        w[c] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p + 8 * c))));
}
VEC8_INLINE void vec8_from_u4x32(const uint8_t *p, vec8 w[4])
{
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i raw = _mm_loadu_si128((const __m128i *)p);
    __m128i lo = _mm_and_si128(raw, low4), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low4);
    w[0] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo));
    w[1] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
    w[2] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi));
    w[3] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
}

#elif defined(__aarch64__) && defined(__GNUC__)
#include <arm_neon.h>
#include <string.h>
#define CPU_VEC8 1
#define VEC8_FN
#define VEC8_INLINE static inline __attribute__((always_inline))

typedef struct {
    float32x4_t lo, hi;
} vec8;

VEC8_INLINE vec8 vec8_zero(void) { return (vec8){vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}; }
VEC8_INLINE vec8 vec8_load(const float *p) { return (vec8){vld1q_f32(p), vld1q_f32(p + 4)}; }
VEC8_INLINE void vec8_store(float *p, vec8 v)
{
    vst1q_f32(p, v.lo);
    vst1q_f32(p + 4, v.hi);
}
VEC8_INLINE vec8 vec8_splat(const float *p)
{
    float32x4_t s = vld1q_dup_f32(p);
    return (vec8){s, s};
}
VEC8_INLINE vec8 vec8_set1(float v) { return (vec8){vdupq_n_f32(v), vdupq_n_f32(v)}; }
VEC8_INLINE vec8 vec8_add(vec8 a, vec8 b) { return (vec8){vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
VEC8_INLINE vec8 vec8_mul(vec8 a, vec8 b) { return (vec8){vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
VEC8_INLINE vec8 vec8_fma(vec8 a, vec8 b, vec8 c)
{
    return (vec8){vfmaq_f32(c.lo, a.lo, b.lo), vfmaq_f32(c.hi, a.hi, b.hi)};
}
VEC8_INLINE float vec8_sum(vec8 v)
{
    float32x4_t x = vaddq_f32(v.lo, v.hi);
    float32x2_t y = vadd_f32(vget_low_f32(x), vget_high_f32(x)); /* (0 + 2, 1 + 3) */
    return vget_lane_f32(y, 0) + vget_lane_f32(y, 1);
}
VEC8_INLINE vec8 vec8_load_first(const float *p, int64_t left)
{
    if (left >= 8)
        return vec8_load(p);
    float lanes[8] = {0};
    if (left > 0)
        memcpy(lanes, p, (size_t)left * sizeof *p);
    return vec8_load(lanes);
}
VEC8_INLINE void vec8_store_first(float *p, vec8 v, int64_t left)
{
    if (left >= 8) {
        vec8_store(p, v);
        return;
    }
    float lanes[8];
    vec8_store(lanes, v);
    if (left > 0)
        memcpy(p, lanes, (size_t)left * sizeof *p);
}
VEC8_INLINE void vec8_prefetch(const float *p) { __builtin_prefetch(p); }
/* eight 16-bit integers widened to floats */
VEC8_INLINE vec8 vec8_from_s16(int16x8_t v)
{
    return (vec8){vcvtq_f32_s32(vmovl_s16(vget_low_s16(v))), vcvtq_f32_s32(vmovl_high_s16(v))};
}
VEC8_INLINE vec8 vec8_from_u16(uint16x8_t v)
{
    return (vec8){vcvtq_f32_u32(vmovl_u16(vget_low_u16(v))), vcvtq_f32_u32(vmovl_high_u16(v))};
}
VEC8_INLINE void vec8_from_i8x32(const uint8_t *p, vec8 w[4])
{
    int8x16_t a = vld1q_s8((const int8_t *)p), b = vld1q_s8((const int8_t *)p + 16);
    w[0] = vec8_from_s16(vmovl_s8(vget_low_s8(a)));
    w[1] = vec8_from_s16(vmovl_high_s8(a));
    w[2] = vec8_from_s16(vmovl_s8(vget_low_s8(b)));
    w[3] = vec8_from_s16(vmovl_high_s8(b));
}
VEC8_INLINE void vec8_from_u4x32(const uint8_t *p, vec8 w[4])
{
    uint8x16_t raw = vld1q_u8(p);
    uint8x16_t lo = vandq_u8(raw, vdupq_n_u8(0x0f)), hi = vshrq_n_u8(raw, 4);
    w[0] = vec8_from_u16(vmovl_u8(vget_low_u8(lo)));
    w[1] = vec8_from_u16(vmovl_high_u8(lo));
    w[2] = vec8_from_u16(vmovl_u8(vget_low_u8(hi)));
    w[3] = vec8_from_u16(vmovl_high_u8(hi));
}

#else
#define CPU_VEC8 0
#endif

#endif /* EMBER_CPU_VEC8_H */
