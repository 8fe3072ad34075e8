/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-gemm-skinny.c — the products with one short side, which
 * the small models are made of and OpenBLAS runs slowly.
 *
 * A 10-class linear layer multiplies by a matrix 10 wide, and a one-channel
 * 3x3 convolution's weight gradient is 9 wide; OpenBLAS packs and tiles for
 * large squares and runs these at a third of its speed (docs/benchmarks.md,
 * "the compute bound"). Four shapes, C = alpha op(A) op(B) + beta C, row
 * major, each a loop that keeps every partial sum in a register:
 *
 *   dots     C (m x n) = A (m x k) B^T,  n <= 12: each C entry a dot product
 *            of a row of A with a row of B, both along k (a linear layer's
 *            forward pass; a convolution's weight gradient)
 *   narrow B C (m x n) = A B,            n <= 8: B's columns copied into
 *            rows a block of k at a time, then dots (a convolution's
 *            forward pass over a plane of a few positions)
 *   columns  C (m x n) = A^T B,          m <= 12, A stored (k x m): each row
 *            of C a sum of k rows of B scaled by a column of A (a linear
 *            layer's weight gradient)
 *   short k  C (m x n) = A B,            k <= 16, n >= 4096: each four rows of
 *            C by 16 columns a sum of k rows of B (a wide linear layer's
 *            input gradient, kerascnn's 64 x 21632 from a 10-wide gradient)
 *
 * The products of a wide layer read or write megabytes that live in the
 * last-level cache or memory, not in L1, so each kernel is also written for
 * the way it walks memory: dots takes k in blocks whose rows of B stay in
 * L2 while every row of A passes; columns reads k rows of B far apart and
 * asks for each one's next lines ahead (the hardware's prefetcher follows
 * a few such streams, not 64); short k writes C by column blocks whose
 * rows of B stay in L1. A short k on a narrow product (a one-channel
 * convolution's forward pass, 676 wide) lost to OpenBLAS (61 against 95
 * GFLOP/s), so those stay there.
 *
 * They are written on eight-float vectors (cpu-vec8.h): AVX2 and FMA on
 * x86-64 (from 2013 on), which the build does not assume, so they are used
 * when the CPU says it has them; NEON on 64-bit ARM. Anything else goes to
 * OpenBLAS as before, and EMBER_CPU_GEMM=blas (or EMBER_CPU_SIMD=none)
 * sends everything there (to compare).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-impl.h"
#include "cpu-vec8.h"

#if CPU_VEC8

/* the vectors here (AVX2 and FMA, or NEON), and not turned off
 * (EMBER_CPU_GEMM=blas or EMBER_CPU_SIMD=none, to compare) */
static bool skinny_usable(void)
{
    static int known = -1; /* racing threads store the same answer */
    if (known < 0) {
        const char *choice = getenv("EMBER_CPU_GEMM");
        known = cpu_simd() != CPU_SIMD_NONE && !(choice && strcmp(choice, "blas") == 0);
    }
    return known;
}

static inline void put(float *c, float v, float alpha, float beta)
{
    *c = alpha * v + (beta != 0.0f ? beta * *c : 0.0f);
}

VEC8_INLINE void put8(float *c, vec8 v, float alpha, float beta)
{
    v = vec8_mul(v, vec8_set1(alpha));
    if (beta != 0.0f)
        v = vec8_fma(vec8_load(c), vec8_set1(beta), v);
    vec8_store(c, v);
}

/* The tiles take their count of rows or columns as a constant: `case n:
 * TILE(n);` for each count gives each its own inlined copy of the tile,
 * whose partial sums then stay in registers. */
#define CASE(n, TILE)                                                                                        \
    case n:                                                                                                  \
        TILE(n);                                                                                             \
        break;
#define CASES_UP_TO_4(TILE) CASE(1, TILE) CASE(2, TILE) CASE(3, TILE) CASE(4, TILE)
#define CASES_UP_TO_6(TILE) CASES_UP_TO_4(TILE) CASE(5, TILE) CASE(6, TILE)
#define CASES_UP_TO_12(TILE)                                                                                 \
    CASES_UP_TO_6(TILE) CASE(7, TILE) CASE(8, TILE) CASE(9, TILE) CASE(10, TILE) CASE(11, TILE) CASE(12, TILE)

/* ---------------------------------------------------------------- dots */

/* Two rows of C (a1 may repeat a0 for an odd last row), COLS columns from
 * j, over k entries of A's and B's rows; beta is the block's (g->beta for
 * the first block of k, then 1: the blocks add up). */
VEC8_INLINE void dots_tile(const struct ember_gemm *g, const float *a0, const float *a1, const float *b,
                           float *c0, float *c1, const int cols, int64_t k, float beta)
{
    int64_t k8 = k & ~(int64_t)7;
    vec8 s0[6], s1[6];
    const float *bt[6];
    for (int t = 0; t < cols; t++) {
        s0[t] = s1[t] = vec8_zero();
        bt[t] = b + t * g->ldb;
    }
    for (int64_t p = 0; p < k8; p += 8) {
        vec8 x0 = vec8_load(a0 + p), x1 = vec8_load(a1 + p);
        for (int t = 0; t < cols; t++) {
            vec8 y = vec8_load(bt[t] + p);
            s0[t] = vec8_fma(x0, y, s0[t]);
            s1[t] = vec8_fma(x1, y, s1[t]);
        }
    }
    for (int t = 0; t < cols; t++) {
        float d0 = vec8_sum(s0[t]), d1 = vec8_sum(s1[t]);
        for (int64_t p = k8; p < k; p++) {
            d0 += a0[p] * bt[t][p];
            d1 += a1[p] * bt[t][p];
        }
        put(c0 + t, d0, g->alpha, beta);
        if (c1)
            put(c1 + t, d1, g->alpha, beta);
    }
}

/* k in blocks of this many: a block of 12 rows of B is 192 KiB, in L2 */
#define DOTS_K_BLOCK 4096

static VEC8_FN void dots(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                         float *c)
{
    for (int64_t k0 = 0; k0 < g->k; k0 += DOTS_K_BLOCK) {
        int64_t k = g->k - k0 < DOTS_K_BLOCK ? g->k - k0 : DOTS_K_BLOCK;
        float beta = k0 ? 1.0f : g->beta;
        for (int64_t i = 0; i < m; i += 2) {
            const float *a0 = a + i * g->lda + k0, *a1 = i + 1 < m ? a0 + g->lda : a0;
            float *c0 = c + i * g->ldc, *c1 = i + 1 < m ? c0 + g->ldc : NULL;
            for (int64_t j = 0; j < n;) {
                /* tiles of at most six columns, as even as they come: 10 is 5 + 5 */
                int64_t left = n - j, tiles = (left + 5) / 6;
                int cols = (int)((left + tiles - 1) / tiles);
                const float *bj = b + j * g->ldb + k0;
                float *cj0 = c0 + j, *cj1 = c1 ? c1 + j : NULL;
#define TILE(cols) dots_tile(g, a0, a1, bj, cj0, cj1, cols, k, beta)
                switch (cols) {
                    CASES_UP_TO_6(TILE)
                }
#undef TILE
                j += cols;
            }
        }
    }
}

/* ------------------------------------------------------------ narrow B */

/* B's columns at most. One image's 3x3 convolution to 512 channels, forward
 * on one thread against OpenBLAS (2026-12-03): a 2x2 plane (4 columns)
 * 0.81 ms against 1.12, 3x3 (9) even, 4x4 (16) 3.2 ms against 1.6, where
 * OpenBLAS's tiles use the vectors better than two rows of dots do */
#define NARROW_B_MAX 8

/* k in blocks of this many for narrow B: its rows for a block, 8 x 512
 * floats, 16 KiB, fit the stack of any thread that calls (no allocation: a
 * prediction calls no malloc, tests/unit/test_embed.c) */
#define NARROW_B_K_BLOCK 512

/* C (m x n) = A B with B (k x n) a few columns wide: a convolution's
 * forward pass over a plane of a few positions, one image at a time
 * (ResNet-18's last stage on a 64x64 image: 512 filters of 4,608 weights
 * against 2x2 positions). OpenBLAS packs A for it, writing every weight
 * once more than the product reads it; here B's columns are copied into
 * rows, a block of k at a time, and dots streams A once (each block of its
 * columns once). */
static VEC8_FN void narrow_b(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                             float *c)
{
    float rows[NARROW_B_MAX * NARROW_B_K_BLOCK];
    struct ember_gemm part = *g;
    part.trans_b = true;
    for (int64_t k0 = 0; k0 < g->k; k0 += NARROW_B_K_BLOCK) {
        int64_t k = g->k - k0 < NARROW_B_K_BLOCK ? g->k - k0 : NARROW_B_K_BLOCK;
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++)
                rows[j * k + p] = b[(k0 + p) * g->ldb + j];
        /* the blocks add up: C = alpha (the first's sums) + beta C, then + alpha (each next's) */
        part.k = k, part.ldb = k, part.beta = k0 ? 1.0f : g->beta;
        dots(&part, m, n, a + k0, rows, c);
    }
}

/* ------------------------------------------------------------- columns */

/* how far ahead along each row of B columns asks for lines: 64 floats, four
 * lines (measured: 16 to 128 all gain; kerascnn's weight gradient from a
 * cold B 1110 -> 357 us, from the last-level cache 545 -> 312) */
#define COLUMNS_AHEAD 64

/* Every row of C (ROWS of them) by eight columns from j: A^T's rows are
 * A's columns, so row r scales by a[p * lda + r]. */
VEC8_INLINE void columns_tile(const struct ember_gemm *g, const float *a, const float *b, float *c,
                              const int rows)
{
    vec8 s[12];
    for (int r = 0; r < rows; r++)
        s[r] = vec8_zero();
    for (int64_t p = 0; p < g->k; p++) {
        /* a hint only: a line past the end of B is never read */
        vec8_prefetch(b + p * g->ldb + COLUMNS_AHEAD);
        vec8 y = vec8_load(b + p * g->ldb);
        const float *ap = a + p * g->lda;
        for (int r = 0; r < rows; r++)
            s[r] = vec8_fma(vec8_splat(ap + r), y, s[r]);
    }
    for (int r = 0; r < rows; r++)
        put8(c + r * g->ldc, s[r], g->alpha, g->beta);
}

static VEC8_FN void columns(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                            float *c)
{
    int64_t n8 = n & ~(int64_t)7;
    for (int64_t j = 0; j < n8; j += 8) {
#define TILE(rows) columns_tile(g, a, b + j, c + j, rows)
        switch (m < 12 ? m : 12) {
            CASES_UP_TO_12(TILE)
        }
#undef TILE
    }
    if (n8 < n) /* the last columns (B as stored, so they start at b + n8) */
        cpu_gemm_plain(g, m, n - n8, a, b + n8, c + n8);
}

/* ------------------------------------------------------------- short k */

/* ROWS (<= 4) rows of C by 16 columns from j: a sum of k rows of B, each
 * scaled by the rows' entries of A */
VEC8_INLINE void short_k_tile(const struct ember_gemm *g, const float *a, const float *b, float *c,
                              const int rows)
{
    vec8 s[4][2];
    for (int r = 0; r < rows; r++)
        s[r][0] = s[r][1] = vec8_zero();
    for (int64_t p = 0; p < g->k; p++) {
        vec8 y0 = vec8_load(b + p * g->ldb), y1 = vec8_load(b + p * g->ldb + 8);
        for (int r = 0; r < rows; r++) {
            vec8 x = vec8_splat(a + r * g->lda + p);
            s[r][0] = vec8_fma(x, y0, s[r][0]);
            s[r][1] = vec8_fma(x, y1, s[r][1]);
        }
    }
    for (int r = 0; r < rows; r++) {
        put8(c + r * g->ldc, s[r][0], g->alpha, g->beta);
        put8(c + r * g->ldc + 8, s[r][1], g->alpha, g->beta);
    }
}

/* columns of C in blocks of this many: k <= 16 rows of B of them, 16 KiB at
 * most, stay in L1 while every row of C is written */
#define SHORT_K_COLUMNS 256

static VEC8_FN void short_k(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                            float *c)
{
    int64_t n16 = n & ~(int64_t)15;
    for (int64_t j0 = 0; j0 < n16; j0 += SHORT_K_COLUMNS) {
        int64_t j1 = j0 + SHORT_K_COLUMNS < n16 ? j0 + SHORT_K_COLUMNS : n16;
        for (int64_t i = 0; i < m; i += 4) {
            const float *ai = a + i * g->lda;
            float *ci = c + i * g->ldc;
#define TILE(rows) short_k_tile(g, ai, b + j, ci + j, rows)
            for (int64_t j = j0; j < j1; j += 16)
                switch (m - i < 4 ? m - i : 4) {
                    CASES_UP_TO_4(TILE)
                }
#undef TILE
        }
    }
    if (n16 < n) /* the last columns (B as stored, so they start at b + n16) */
        cpu_gemm_plain(g, m, n - n16, a, b + n16, c + n16);
}

bool cpu_gemm_skinny(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                     float *c)
{
    if (!skinny_usable())
        return false;
    if (!g->trans_a && g->trans_b && n <= 12 && g->k >= 8) {
        dots(g, m, n, a, b, c);
        return true;
    }
    if (!g->trans_a && !g->trans_b && n <= NARROW_B_MAX && g->k >= 64 && m >= 16) {
        narrow_b(g, m, n, a, b, c);
        return true;
    }
    if (g->trans_a && !g->trans_b && m <= 12 && n >= 8) {
        columns(g, m, n, a, b, c);
        return true;
    }
    if (!g->trans_a && !g->trans_b && g->k <= 16 && n >= 4096) {
        short_k(g, m, n, a, b, c);
        return true;
    }
    return false;
}

#else /* neither: OpenBLAS (or the plain loop) for every shape */

bool cpu_gemm_skinny(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                     float *c)
{
    (void)g, (void)m, (void)n, (void)a, (void)b, (void)c;
    return false;
}

#endif
