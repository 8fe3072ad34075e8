/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-quant-vec.h — cpu-quant.c's vector kernel, written once
 * on cpu-vec.h's names and included by cpu-quant.c once per width:
 * rows_vec8 (AVX2, NEON) and rows_vec16 (AVX-512). No include guard: each
 * inclusion is another width's copy.
 *
 * The includer sets VEC_LANES, and QUANT_VEC_FN to the width's target
 * (cpu-vec.h's VEC_FN with, on x86, F16C for the scales). The eight-lane
 * copy also multiplies x's 8-bit blocks at EMBER_MATMUL_MEDIUM (the i8x32
 * functions of cpu-quant.c); the sixteen-lane one never does.
 */

/* A block of W as one kernel multiplies it: its 32 integers as floats in
 * 32 / VEC_LANES vectors, or, for x's 8-bit blocks, as bytes */
struct VEC_NAME(block) {
    vec_t floats[32 / VEC_LANES];
#if VEC_LANES == 8
    i8x32 bytes;
#endif
};

static inline __attribute__((always_inline)) QUANT_VEC_FN void
VEC_NAME(unpack)(ember_dtype type, bool bytes, const uint8_t *ints, struct VEC_NAME(block) * w)
{
#if VEC_LANES == 8
    if (bytes) {
        w->bytes = type == EMBER_Q8_0 ? i8x32_load(ints) : i8x32_q4(ints);
        return;
    }
#endif
    (void)bytes;
    if (type == EMBER_Q8_0)
        vec_from_i8x32(ints, w->floats);
    else
        vec_from_u4x32(ints, w->floats);
}

/* The block's integers times x's 32 values at `at` (a block of x, row-major),
 * in vector lanes still to be summed, and the factor d the lanes' sum takes
 * (*scale; times x's step for its 8-bit block). In floats, summed two ways
 * (s, t) so that each FMA waits on half as many before it. */
static inline __attribute__((always_inline)) QUANT_VEC_FN vec_t
VEC_NAME(block_dot)(const struct quant_job *j, ember_dtype type, bool bytes, const struct VEC_NAME(block) * w,
                    int64_t at, float *scale)
{
#if VEC_LANES == 8
    if (bytes) {
        *scale *= j->xd[at];
        return i8x32_dot(w->bytes, i8x32_load(j->xq + at * 32), type == EMBER_Q8_0);
    }
#endif
    (void)type, (void)bytes;
    const float *x = j->x + at * 32;
    vec_t s = vec_mul(w->floats[0], vec_load(x));
    vec_t t = vec_mul(w->floats[1], vec_load(x + VEC_LANES));
#if VEC_LANES == 8 /* a block is four vectors: two more */
    s = vec_fma(w->floats[2], vec_load(x + 16), s);
    t = vec_fma(w->floats[3], vec_load(x + 24), t);
#endif
    return vec_add(s, t);
}

/* The rows of x against one row of W, for one type (always inlined with a
 * constant type, `bytes` and, for one row, `rows`: QUANT_BY_TYPE). acc[i] +=
 * the sum over W's blocks of d (q . x_i) + m sum(x_i), the x sums from xsum;
 * with `bytes`, q . x_i ~ xd_i (q . xq_i). */
static inline __attribute__((always_inline)) QUANT_VEC_FN void VEC_NAME(rows_of)(const struct quant_job *j,
                                                                                 ember_dtype type, bool bytes,
                                                                                 int64_t r, int64_t i0,
                                                                                 int64_t rows, float *acc)
{
    const struct ember_quant_gemm *q = j->q;
    int64_t blocks = q->k / 32;
    const uint8_t *row = j->w + r * blocks * j->block_bytes;
    vec_t vacc[X_ROWS];
    float offset[X_ROWS] = {0};
    for (int64_t i = 0; i < rows; i++)
        vacc[i] = vec_zero();
    for (int64_t b = 0; b < blocks; b++) {
        float d, m;
        __builtin_prefetch(row + b * j->block_bytes + QUANT_AHEAD);
        struct VEC_NAME(block) w;
        VEC_NAME(unpack)(type, bytes, block_scales(type, row + b * j->block_bytes, &d, &m), &w);
        for (int64_t i = 0; i < rows; i++) {
            int64_t at = (i0 + i) * blocks + b;
            float scale = d;
            vec_t dots = VEC_NAME(block_dot)(j, type, bytes, &w, at, &scale);
            vacc[i] = vec_fma(vec_set1(scale), dots, vacc[i]);
            if (type != EMBER_Q8_0)
                offset[i] += m * j->xsum[at];
        }
    }
    for (int64_t i = 0; i < rows; i++)
        acc[i] += vec_sum(vacc[i]) + offset[i];
}

static QUANT_VEC_FN void VEC_NAME(rows)(const struct quant_job *j, int64_t r, int64_t i0, int64_t rows,
                                        float *acc)
{
    if (VEC_LANES == 8 && j->xq) {
        if (rows == 1)
            QUANT_BY_TYPE(VEC_NAME(rows_of), true, 1);
        else
            QUANT_BY_TYPE(VEC_NAME(rows_of), true, rows);
    } else if (rows == 1) {
        QUANT_BY_TYPE(VEC_NAME(rows_of), false, 1);
    } else {
        QUANT_BY_TYPE(VEC_NAME(rows_of), false, rows);
    }
}
