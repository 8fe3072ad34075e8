/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-conv-direct-vec.h — cpu-conv-direct.c's two vector
 * kernels, written once on cpu-vec.h's names and included by
 * cpu-conv-direct.c once per width: taps_vec8 and weight_sums_vec8 (AVX2,
 * NEON), taps_vec16 and weight_sums_vec16 (AVX-512). No include guard:
 * each inclusion is another width's copy.
 *
 * The includer sets VEC_LANES and the blocks that fill the width's
 * registers: TAP_ROWS, the tap kernel's rows (each 2 vectors of positions
 * a step), and SUM_OUTS, the weight gradient's output channels (by 6 taps,
 * a vector of positions a step). EACH_OF_n and EACH_OUT_n write a line once
 * a row, tap or channel, so that the sums are indexed by constants only and
 * stay in registers.
 */

#define EACH_ROW(X)    VEC_CAT(EACH_OF_, TAP_ROWS, )(X)
#define EACH_OUT(X, u) VEC_CAT(EACH_OUT_, SUM_OUTS, )(X, u)

/* taps_plain on vectors: TAP_ROWS rows x 2 vectors of positions a step,
 * onto y a row of it at a time when `to` says (the last block of a row
 * masked) */
VEC_FN static void VEC_NAME(taps)(const float *src, const int64_t *at, int64_t taps, const float *packed,
                                  int rows, const struct landing *to, int64_t positions)
{
    const int64_t wide = 2 * VEC_LANES; /* positions a step */
    int64_t per_row = (to->ow + wide - 1) / wide, steps = to->qw ? to->oh * per_row : positions / wide;
    for (int64_t step = 0; step < steps; step++) {
        int64_t q0 = step * wide, left = wide;
        float *out = to->out + q0;
        if (to->qw) {
            int64_t oy = step / per_row, ox = step % per_row * wide;
            q0 = oy * to->qw + ox, left = to->ow - ox;
            out = to->out + oy * to->ow + ox;
        }
        bool onto = to->qw && to->add;
        vec_t acc[TAP_ROWS][2];
#define START(r)                                                                                             \
    acc[r][0] = onto && r < rows ? vec_load_first(out + r * to->ld, left) : vec_zero();                      \
    acc[r][1] =                                                                                              \
        onto && r < rows ? vec_load_first(out + r * to->ld + VEC_LANES, left - VEC_LANES) : vec_zero();
        EACH_ROW(START)
#undef START
        const float *wk = packed;
        for (int64_t t = 0; t < taps; t++, wk += TAP_ROWS) {
            const float *in = src + at[t] + q0;
            vec_t v0 = vec_load(in), v1 = vec_load(in + VEC_LANES);
#define STEP(r)                                                                                              \
    {                                                                                                        \
        vec_t wv = vec_splat(wk + r);                                                                        \
        acc[r][0] = vec_fma(wv, v0, acc[r][0]);                                                              \
        acc[r][1] = vec_fma(wv, v1, acc[r][1]);                                                              \
    }
            EACH_ROW(STEP)
#undef STEP
        }
#define STORE(r)                                                                                             \
    if (r < rows) {                                                                                          \
        vec_store_first(out + r * to->ld, acc[r][0], left);                                                  \
        vec_store_first(out + r * to->ld + VEC_LANES, acc[r][1], left - VEC_LANES);                          \
    }
        EACH_ROW(STORE)
#undef STORE
    }
}

/* weight_sums_plain on vectors: SUM_OUTS output channels x 6 taps, a
 * vector of positions a step, summed over the chunk's images before the
 * sums are added across their lanes (a block's missing channels and taps
 * repeat its first, their sums unused) */
VEC_FN static void VEC_NAME(weight_sums)(const struct chunk *k, const int64_t *at, int64_t taps,
                                         int64_t dy_ld, int64_t oc, int64_t positions, float *dw)
{
    for (int64_t o0 = 0; o0 < oc; o0 += SUM_OUTS) {
        int outs = oc - o0 < SUM_OUTS ? (int)(oc - o0) : SUM_OUTS;
        for (int64_t t0 = 0; t0 < taps; t0 += 6) {
            int count = taps - t0 < 6 ? (int)(taps - t0) : 6;
            vec_t acc[SUM_OUTS][6];
#define ZERO(r, u) acc[r][u] = vec_zero();
#define START(u)   EACH_OUT(ZERO, u)
            EACH_OF_6(START)
#undef START
#undef ZERO
            for (int64_t i = 0; i < k->n; i++) {
                const float *d[SUM_OUTS], *in[6];
                for (int r = 0; r < SUM_OUTS; r++)
                    d[r] = k->dy + i * k->dy_next + (o0 + (r < outs ? r : 0)) * dy_ld;
                for (int u = 0; u < 6; u++)
                    in[u] = k->src + i * k->src_next + at[t0 + (u < count ? u : 0)];
                for (int64_t q = 0; q < positions; q += VEC_LANES) {
                    vec_t e[SUM_OUTS];
#define LOAD(r, u) e[r] = vec_load(d[r] + q);
                    EACH_OUT(LOAD, 0)
#undef LOAD
#define FMA(r, u) acc[r][u] = vec_fma(e[r], v, acc[r][u]);
#define STEP(u)                                                                                              \
    {                                                                                                        \
        vec_t v = vec_load(in[u] + q);                                                                       \
        EACH_OUT(FMA, u)                                                                                     \
    }
                    EACH_OF_6(STEP)
#undef STEP
#undef FMA
                }
            }
#define SAVE(u)                                                                                              \
    for (int r = 0; r < outs && u < count; r++)                                                              \
        dw[(o0 + r) * taps + t0 + u] += vec_sum(acc[r][u]);
            EACH_OF_6(SAVE)
#undef SAVE
        }
    }
}

#undef EACH_ROW
#undef EACH_OUT
