/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-quant-vec.h — cpu-quant.c's vector kernel, written once
 * on cpu-vec.h's names and included by cpu-quant.c once per width:
 * rows_vec8 (AVX2, NEON) and rows_vec16 (AVX-512). No include guard: each
 * inclusion is another width's copy.
 *
 * The includer sets VEC_LANES, and QUANT_VEC_FN to the width's target
 * (cpu-vec.h's VEC_FN with, on x86, F16C for the scales).
 */

/* The rows of x against one row of W, for one type (always inlined with a
 * constant type, so that each type's loop has no branch on it). acc[i] +=
 * sum over W's blocks of d (q . x_i) + m sum(x_i), the x sums from xsum. A
 * block of 32 is 32 / VEC_LANES vectors, summed two ways (s, t) so that
 * each FMA waits on half as many before it. */
static inline __attribute__((always_inline)) QUANT_VEC_FN void VEC_NAME(rows_of)(const struct quant_job *j,
                                                                                 ember_dtype type, int64_t r,
                                                                                 int64_t i0, int64_t rows,
                                                                                 float *acc)
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
        const uint8_t *ints = block_scales(type, row + b * j->block_bytes, &d, &m);
        vec_t w[32 / VEC_LANES];
        if (type == EMBER_Q8_0)
            vec_from_i8x32(ints, w);
        else
            vec_from_u4x32(ints, w);
        vec_t vd = vec_set1(d);
        for (int64_t i = 0; i < rows; i++) {
            const float *x = j->x + (i0 + i) * q->k + b * 32;
            vec_t s = vec_mul(w[0], vec_load(x));
            vec_t t = vec_mul(w[1], vec_load(x + VEC_LANES));
#if VEC_LANES == 8 /* a block is four vectors: two more */
            s = vec_fma(w[2], vec_load(x + 16), s);
            t = vec_fma(w[3], vec_load(x + 24), t);
#endif
            vacc[i] = vec_fma(vd, vec_add(s, t), vacc[i]);
            if (type != EMBER_Q8_0)
                offset[i] += m * j->xsum[(i0 + i) * blocks + b];
        }
    }
    for (int64_t i = 0; i < rows; i++)
        acc[i] += vec_sum(vacc[i]) + offset[i];
}

static QUANT_VEC_FN void VEC_NAME(rows)(const struct quant_job *j, int64_t r, int64_t i0, int64_t rows,
                                        float *acc)
{
    switch (j->q->type) {
    case EMBER_Q4_0: VEC_NAME(rows_of)(j, EMBER_Q4_0, r, i0, rows, acc); break;
    case EMBER_Q4_1: VEC_NAME(rows_of)(j, EMBER_Q4_1, r, i0, rows, acc); break;
    default: VEC_NAME(rows_of)(j, EMBER_Q8_0, r, i0, rows, acc); break;
    }
}
