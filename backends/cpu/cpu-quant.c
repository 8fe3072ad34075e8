/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-quant.c — products with block-quantised weights, and
 * their rows dequantised (backends/quant.h has the formats).
 *
 * A language model generating text multiplies one row of activations by
 * every weight matrix for each token: the weights are read once a token
 * and nothing else is, so the speed is the memory's. The weights therefore
 * stay in their blocks (4.5 to 8.5 bits a weight instead of 32) and each
 * block is turned into floats in registers, just before its products.
 *
 * The activations stay floats: each block's sum is
 *   sum_i (d q_i + m) x_i = d (sum_i q_i x_i) + m (sum_i x_i)
 * with the x sums of each block computed once per row of x and shared by
 * every row of W. (llama.cpp rounds the activations to 8 bits as well, for
 * integer products; ember does only when asked, at EMBER_MATMUL_MEDIUM,
 * below, so that by default its logits stay within float rounding of the
 * dequantised model's.) With AVX2 and FMA, AVX-512, or
 * 64-bit ARM's NEON, the 4- and 8-bit blocks of 32 are unpacked by vector
 * instructions straight into FMAs (EMBER_CPU_SIMD chooses, as for the
 * convolutions; one kernel compiled for each width, cpu-quant-vec.h); the
 * K-quants, and CPUs without those, dequantise a block into floats first.
 *
 * The threads split W's rows: each reads its rows once, for every row of x.
 */
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "cpu-impl.h"
#include "cpu-vec.h"

/* rows of x taken together: each block of W is unpacked once for them */
#define X_ROWS 8
/* How far ahead in W's bytes each block asks for its lines (a hint: past
 * W's end it reads nothing). The rows are read in order, yet without it the
 * weights came at 3.4 GB/s on one core of the development VM's Xeon and
 * SmolLM2 generated 34 tokens/s; 2 KiB ahead, 45 (512 bytes ahead: 37;
 * 1 KiB: 43; 2, 4 and 8 KiB within 2% of each other). */
#define QUANT_AHEAD 2048

struct quant_job {
    const struct ember_quant_gemm *q;
    const float *x;
    const uint8_t *w;
    float *y;
    const float *xsum; /* (m, k / 32): each 32 of x summed */
    /* at EMBER_MATMUL_MEDIUM, x rounded to 8 bits a block of 32 (x_i ~ xd
     * xq_i, xq in [-127, 127]), for the integer kernel; NULL otherwise */
    const int8_t *xq;
    const float *xd; /* (m, k / 32) */
    int64_t block_elements, block_bytes;
    enum cpu_simd vector; /* the vector kernels' width, or none */
};

/* plain: any format, a block dequantised, then its dot with each row of x */
static void rows_plain(const struct quant_job *j, int64_t r, int64_t i0, int64_t rows, float *acc)
{
    const struct ember_quant_gemm *q = j->q;
    float w[256];
    int64_t blocks = q->k / j->block_elements;
    const uint8_t *row = j->w + r * blocks * j->block_bytes;
    for (int64_t b = 0; b < blocks; b++) {
        ember_dequantize_block(q->type, row + b * j->block_bytes, w);
        for (int64_t i = 0; i < rows; i++) {
            const float *x = j->x + (i0 + i) * q->k + b * j->block_elements;
            float part[8] = {0};
            for (int64_t e = 0; e < j->block_elements; e += 8)
                for (int l = 0; l < 8; l++)
                    part[l] += w[e + l] * x[e + l];
            acc[i] +=
                ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        }
    }
}

#if CPU_VEC8
#if defined(__x86_64__)
/* the vec8 kernels also turn each block's half-precision scales into floats
 * with F16C's instruction, which every AVX2 CPU has in practice (checked:
 * quant_vectors_ok) */
#define QUANT_VEC8   __attribute__((target("avx2,fma,f16c")))
#define QUANT_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))
static inline __attribute__((always_inline, target("f16c"))) float half_to_float(uint16_t h)
{
    return _cvtsh_ss(h);
}
#else /* aarch64: every ARMv8-A core converts halves */
#define QUANT_VEC8
#define QUANT_INLINE static inline __attribute__((always_inline))
static inline float half_to_float(uint16_t h)
{
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}
#endif

/* A block's scale d and offset m (d * q + m is each weight; Q4_0's m is
 * -8 d, Q8_0's 0) and where its integers start, the halves turned into
 * floats exactly, as ember_half_to_float does */
QUANT_INLINE const uint8_t *block_scales(ember_dtype type, const uint8_t *block, float *d, float *m)
{
    *d = half_to_float(ember_quant_u16(block));
    if (type == EMBER_Q4_1) {
        *m = half_to_float(ember_quant_u16(block + 2));
        return block + 4;
    }
    *m = type == EMBER_Q4_0 ? -8.0f * *d : 0.0f;
    return block + 2;
}

/* KERNEL(j, type, BYTES, r, i0, ROWS, acc) with the type a constant, so
 * that each type's loop has no branch on it; the kernels call it with ROWS
 * 1 as well (generation's one row), whose sums then stay in registers
 * rather than in an array in memory (an FMA waiting on a store each block:
 * SmolLM2 generated 45 tokens/s on one core, 52 to 55 with them in registers) */
#define QUANT_BY_TYPE(KERNEL, BYTES, ROWS)                                                                   \
    do {                                                                                                     \
        switch (j->q->type) {                                                                                \
        case EMBER_Q4_0: KERNEL(j, EMBER_Q4_0, BYTES, r, i0, ROWS, acc); break;                              \
        case EMBER_Q4_1: KERNEL(j, EMBER_Q4_1, BYTES, r, i0, ROWS, acc); break;                              \
        default: KERNEL(j, EMBER_Q8_0, BYTES, r, i0, ROWS, acc); break;                                      \
        }                                                                                                    \
    } while (0)

/* ------------------------------------------------ 8-bit activations */

/* At EMBER_MATMUL_MEDIUM a product of Q4_0, Q4_1 or Q8_0 weights takes x
 * rounded to 8-bit integers, a scale a block of 32 (as llama.cpp's Q8_0
 * activations), and multiplies integers: a block's 32 products summed
 * exactly in 32-bit lanes, then scaled once,
 *   sum_i (d q_i + m) x_i ~ d xd (sum_i q_i xq_i) + m (sum_i x_i)
 * (the offset's x sum is the floats', exact as at HIGHEST). Each x is off
 * by at most half a step, xd / 2 = max|x| / 254 of its block: about 8 bits,
 * as MEDIUM allows. Four lanes of products a 32-bit lane, the eight lanes
 * then floats in a vec8, on both x86 (AVX2's unsigned-by-signed byte
 * products) and ARM (NEON's signed widening ones): the same integers, the
 * same floats, the same bits on either. */

#if defined(__x86_64__)
typedef __m256i i8x32;
/* a Q4 block's 32 weights as bytes 0-15 (low halves first), or Q8's */
QUANT_INLINE i8x32 i8x32_q4(const uint8_t *p)
{
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i raw = _mm_loadu_si128((const __m128i *)p);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), low4), _mm_and_si128(raw, low4));
}
QUANT_INLINE i8x32 i8x32_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
/* lane j: the sum of w_t x_t over t in [4j, 4j + 4), as a float. maddubs
 * multiplies unsigned by signed bytes: a signed w gives its size, x its
 * sign. No pair's sum can saturate: 2 x 128 x 127 < 32767. */
QUANT_INLINE vec8 i8x32_dot(i8x32 w, i8x32 x, bool signed_w)
{
    if (signed_w)
        x = _mm256_sign_epi8(x, w), w = _mm256_sign_epi8(w, w);
    __m256i pairs = _mm256_maddubs_epi16(w, x);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
#else /* aarch64 */
typedef int8x16x2_t i8x32;
QUANT_INLINE i8x32 i8x32_q4(const uint8_t *p)
{
    uint8x16_t raw = vld1q_u8(p);
    return (i8x32){
        {vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0f))), vreinterpretq_s8_u8(vshrq_n_u8(raw, 4))}};
}
QUANT_INLINE i8x32 i8x32_load(const void *p) { return vld1q_s8_x2((const int8_t *)p); }
/* four lanes of 16 bytes' products: widened to 16 bits, pairs to 32, pairs of pairs */
QUANT_INLINE int32x4_t i8x16_quads(int8x16_t w, int8x16_t x)
{
    int32x4_t low = vpaddlq_s16(vmull_s8(vget_low_s8(w), vget_low_s8(x)));
    return vpaddq_s32(low, vpaddlq_s16(vmull_high_s8(w, x)));
}
QUANT_INLINE vec8 i8x32_dot(i8x32 w, i8x32 x, bool signed_w)
{
    (void)signed_w; /* NEON multiplies signed bytes as they are */
    return (vec8){vcvtq_f32_s32(i8x16_quads(w.val[0], x.val[0])),
                  vcvtq_f32_s32(i8x16_quads(w.val[1], x.val[1]))};
}
#endif

/* x's rows (m, k) rounded to 8 bits a block: xq (m, k), xd (m, k / 32); a
 * block holding Inf or NaN gets a NaN scale, so that its products are NaN */
static void round_rows_i8(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd)
{
    for (int64_t s = 0; s < m * (k / 32); s++) {
        const float *v = x + s * 32;
        float amax = 0.0f;
        for (int e = 0; e < 32; e++)
            amax = fabsf(v[e]) > amax || isnan(v[e]) ? fabsf(v[e]) : amax;
        bool finite = isfinite(amax);
        float step = finite ? amax / 127.0f : NAN, inv = finite && amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int e = 0; e < 32; e++) { /* to the nearest, halves away from zero, as roundf */
            float r = finite ? v[e] * inv : 0.0f;
            r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
            xq[s * 32 + e] = (int8_t)(r + (r < 0.0f ? -0.5f : 0.5f));
        }
        xd[s] = step;
    }
}

/* The vector kernel, once a width (cpu-vec.h): rows_vec8 for AVX2 and NEON
 * (the same bits on both; x's 8-bit blocks too) and, on x86, rows_vec16
 * for AVX-512, each compiled for its width's target, QUANT_VEC8 or
 * QUANT_VEC16 (VEC16_FN names F16C already: every AVX-512 CPU has it). */
#define QUANT_VEC16  VEC16_FN
#define QUANT_VEC_FN VEC_CAT(QUANT_VEC, VEC_LANES, )
#define VEC_LANES    8
#include "cpu-quant-vec.h"
#undef VEC_LANES
#if CPU_VEC16
#define VEC_LANES 16
#include "cpu-quant-vec.h"
#undef VEC_LANES
#endif
#endif /* CPU_VEC8 */

/* whether the vector kernels can run: on x86 they need the scales'
 * half-to-float instruction (F16C) besides AVX2 */
static bool quant_vectors_ok(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a, b, c, d; /* CPUID leaf 1: ECX bit 29 (clang 14's __builtin_cpu_supports has no "f16c") */
    return __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
#else
    return CPU_VEC8;
#endif
}

bool cpu_quant_i8(void) { return CPU_VEC8 && quant_vectors_ok() && cpu_simd() != CPU_SIMD_NONE; }

/* the widest kernel the CPU and EMBER_CPU_SIMD allow */
static void rows_widest(const struct quant_job *j, int64_t r, int64_t i0, int64_t rows, float *acc)
{
#if CPU_VEC16
    if (j->vector == CPU_SIMD_AVX512 && !j->xq) { /* 8-bit activations: rows_vec8's */
        rows_vec16(j, r, i0, rows, acc);
        return;
    }
#endif
#if CPU_VEC8
    if (j->vector != CPU_SIMD_NONE) {
        rows_vec8(j, r, i0, rows, acc);
        return;
    }
#endif
    rows_plain(j, r, i0, rows, acc);
}

static void quant_rows(void *p, int64_t begin, int64_t end)
{
    const struct quant_job *j = p;
    const struct ember_quant_gemm *q = j->q;
    for (int64_t r = begin; r < end; r++)
        for (int64_t i0 = 0; i0 < q->m; i0 += X_ROWS) {
            int64_t rows = q->m - i0 < X_ROWS ? q->m - i0 : X_ROWS;
            float acc[X_ROWS] = {0};
            rows_widest(j, r, i0, rows, acc);
            for (int64_t i = 0; i < rows; i++) {
                float *y = j->y + (i0 + i) * q->n + r;
                *y = q->beta != 0.0f ? *y + acc[i] : acc[i];
            }
        }
}

ember_status cpu_quant_matmul(void *dev, const struct ember_quant_gemm *q, ember_ptr x, ember_ptr w,
                              ember_ptr y)
{
    struct cpu_device *d = dev;
    struct quant_job j = {.q = q, .x = cpu_f32(x), .w = (const uint8_t *)cpu_f32(w), .y = cpu_f32(y)};
    if (!ember_quant_block(q->type, &j.block_elements, &j.block_bytes) || q->k % j.block_elements != 0)
        return d->host.fail(d->host.ctx, EMBER_ERR_ARG, "quant_matmul: %s weights with rows of %lld",
                            ember_dtype_label(q->type), (long long)q->k);
    if (q->m == 0 || q->n == 0)
        return EMBER_OK;
    bool blocks32 = q->type == EMBER_Q4_0 || q->type == EMBER_Q4_1 || q->type == EMBER_Q8_0;
    j.vector = blocks32 && quant_vectors_ok() ? cpu_simd() : CPU_SIMD_NONE;
    bool i8 = j.vector && q->precision == EMBER_MATMUL_MEDIUM; /* cpu_quant_i8() */
    /* In the device's scratch: each 32 of x summed, for the blocks'
     * offsets (Q8_0 has none); with 8-bit activations, their scales and
     * x's bytes after */
    int64_t sums = q->m * (q->k / 32);
    if (j.vector) {
        size_t floats = (size_t)sums * (i8 ? 2 : 1) + (i8 ? (size_t)(q->m * q->k + 3) / 4 : 0);
        if (cpu_scratch(d, floats, "quant_matmul") != EMBER_OK)
            return EMBER_ERR_NOMEM;
        float *xsum = d->scratch;
        for (int64_t s = 0; q->type != EMBER_Q8_0 && s < sums; s++) {
            const float *v = j.x + s * 32;
            float t = 0.0f;
            for (int e = 0; e < 32; e++)
                t += v[e];
            xsum[s] = t;
        }
        j.xsum = xsum;
#if CPU_VEC8
        if (i8) {
            float *xd = xsum + sums;
            int8_t *xq = (int8_t *)(xd + sums);
            round_rows_i8(j.x, q->m, q->k, xq, xd);
            j.xq = xq, j.xd = xd;
        }
#endif
    }
    /* a task: enough rows for some 64 KiB of weights */
    int64_t row_bytes = q->k / j.block_elements * j.block_bytes;
    cpu_parallel_for(d->pool, q->n, 65536 / (row_bytes * q->m + 1) + 1, quant_rows, &j);
    return EMBER_OK;
}

struct dequant_job {
    ember_dtype type;
    int64_t cols, vocab, block_elements, block_bytes;
    const int32_t *index;
    const uint8_t *w;
    float *out;
};

static void dequant_rows(void *p, int64_t begin, int64_t end)
{
    const struct dequant_job *j = p;
    int64_t row_bytes = j->cols / j->block_elements * j->block_bytes;
    for (int64_t i = begin; i < end; i++) {
        int64_t v = j->index ? j->index[i] : i;
        float *out = j->out + i * j->cols;
        if (v < 0 || v >= j->vocab) { /* an index outside the table: a row anyone will notice */
            for (int64_t c = 0; c < j->cols; c++)
                out[c] = (float)NAN;
            continue;
        }
        ember_dequantize(j->type, j->w + v * row_bytes, j->cols, out);
    }
}

ember_status cpu_dequantize(void *dev, ember_dtype type, int64_t rows, int64_t cols, int64_t vocab,
                            ember_ptr index, ember_ptr w, ember_ptr out)
{
    struct cpu_device *d = dev;
    struct dequant_job j = {.type = type,
                            .cols = cols,
                            .vocab = vocab,
                            .index = index.buf ? cpu_i32(index) : NULL,
                            .w = (const uint8_t *)cpu_f32(w),
                            .out = cpu_f32(out)};
    if (!ember_quant_block(type, &j.block_elements, &j.block_bytes) || cols % j.block_elements != 0)
        return d->host.fail(d->host.ctx, EMBER_ERR_ARG, "dequantize: %s rows of %lld",
                            ember_dtype_label(type), (long long)cols);
    cpu_parallel_for(d->pool, rows, 16384 / (cols + 1) + 1, dequant_rows, &j);
    return EMBER_OK;
}
