/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-winograd4.c — Winograd's F(4x4, 3x3): each 4x4 block
 * of output from the 6x6 input tile under it, with Lavin and Gray's
 * transforms (points 0, 1, -1, 2, -2 and infinity):
 *
 *   B^T = [4  0 -5  0  1  0]   G = [ 1/4     0     0 ]   A^T = [1 1  1 1  1 0]
 *         [0 -4 -4  1  1  0]       [-1/6  -1/6  -1/6 ]         [0 1 -1 2 -2 0]
 *         [0  4 -4 -1  1  0]       [-1/6   1/6  -1/6 ]         [0 1  1 4  4 0]
 *         [0 -2 -1  2  1  0]       [1/24  1/12   1/6 ]         [0 1 -1 8 -8 1]
 *         [0  2 -1 -2  1  0]       [1/24 -1/12   1/6 ]
 *         [0  4  0 -5  0  1]       [ 0     0     1   ]
 *
 * 36 multiplications for 16 outputs where the direct convolution has 144:
 * four times less arithmetic (F(2x2, 3x3): 2.25), and 36 transformed
 * values for 16 outputs rather than 16 for 4, so less memory traffic too.
 * The price is rounding: the constants up to 8 and 1/24 are not all exact
 * in float, and the error is some 100 times F(2x2)'s (the parity rows
 * measure it). The walk over planes is cpu-winograd.c's; the groups and
 * the products cpu-winograd-driver.c's.
 */
#include <string.h>

#include "cpu-winograd-impl.h"

#define P 36 /* 6x6 positions */

/* u = G g G^T */
static void filter_tile4(const float *g, float *u)
{
    float r[6][3]; /* G g */
    for (int j = 0; j < 3; j++) {
        float g0 = g[0 * 3 + j], g1 = g[1 * 3 + j], g2 = g[2 * 3 + j];
        r[0][j] = g0 / 4.0f;
        r[1][j] = -(g0 + g1 + g2) / 6.0f;
        r[2][j] = -(g0 - g1 + g2) / 6.0f;
        r[3][j] = g0 / 24.0f + g1 / 12.0f + g2 / 6.0f;
        r[4][j] = g0 / 24.0f - g1 / 12.0f + g2 / 6.0f;
        r[5][j] = g2;
    }
    for (int i = 0; i < 6; i++) {
        float g0 = r[i][0], g1 = r[i][1], g2 = r[i][2];
        u[i * 6 + 0] = g0 / 4.0f;
        u[i * 6 + 1] = -(g0 + g1 + g2) / 6.0f;
        u[i * 6 + 2] = -(g0 - g1 + g2) / 6.0f;
        u[i * 6 + 3] = g0 / 24.0f + g1 / 12.0f + g2 / 6.0f;
        u[i * 6 + 4] = g0 / 24.0f - g1 / 12.0f + g2 / 6.0f;
        u[i * 6 + 5] = g2;
    }
}

/* dg = G^T x G, the adjoint of filter_tile4 */
static void filter_grad4(const float *x, float *dg)
{
    float r[3][6]; /* G^T x */
    for (int j = 0; j < 6; j++) {
        float x0 = x[0 * 6 + j], x1 = x[1 * 6 + j], x2 = x[2 * 6 + j], x3 = x[3 * 6 + j], x4 = x[4 * 6 + j],
              x5 = x[5 * 6 + j];
        r[0][j] = x0 / 4.0f - (x1 + x2) / 6.0f + (x3 + x4) / 24.0f;
        r[1][j] = (x2 - x1) / 6.0f + (x3 - x4) / 12.0f;
        r[2][j] = -(x1 + x2) / 6.0f + (x3 + x4) / 6.0f + x5;
    }
    for (int i = 0; i < 3; i++) {
        const float *ri = r[i];
        dg[i * 3 + 0] = ri[0] / 4.0f - (ri[1] + ri[2]) / 6.0f + (ri[3] + ri[4]) / 24.0f;
        dg[i * 3 + 1] = (ri[2] - ri[1]) / 6.0f + (ri[3] - ri[4]) / 12.0f;
        dg[i * 3 + 2] = -(ri[1] + ri[2]) / 6.0f + (ri[3] + ri[4]) / 6.0f + ri[5];
    }
}

/* the rows of x under a block -> v (36, c, tiles), B^T d B */
CPU_WIDEST_VECTORS static void inputs4(float rows[][WINO_SPAN], float *out, int64_t nb, int64_t stride)
{
    float q[6][6][WINO_BLOCK];  /* d B for each of the block's tiles */
    for (int i = 0; i < 6; i++) /* d B, a row at a time across the block's tiles */
        for (int64_t t = 0; t < nb; t++) {
            const float *d = rows[i] + 4 * t;
            q[i][0][t] = 4.0f * d[0] - 5.0f * d[2] + d[4];
            q[i][1][t] = -4.0f * (d[1] + d[2]) + d[3] + d[4];
            q[i][2][t] = 4.0f * (d[1] - d[2]) - d[3] + d[4];
            q[i][3][t] = 2.0f * (d[3] - d[1]) - d[2] + d[4];
            q[i][4][t] = 2.0f * (d[1] - d[3]) - d[2] + d[4];
            q[i][5][t] = 4.0f * d[1] - 5.0f * d[3] + d[5];
        }
    for (int k = 0; k < 6; k++) { /* B^T (d B), a column at a time */
        float *o0 = out + (0 * 6 + k) * stride, *o1 = out + (1 * 6 + k) * stride;
        float *o2 = out + (2 * 6 + k) * stride, *o3 = out + (3 * 6 + k) * stride;
        float *o4 = out + (4 * 6 + k) * stride, *o5 = out + (5 * 6 + k) * stride;
        WINO_ACROSS_TILES
        for (int64_t t = 0; t < nb; t++) {
            float q0 = q[0][k][t], q1 = q[1][k][t], q2 = q[2][k][t], q3 = q[3][k][t], q4 = q[4][k][t],
                  q5 = q[5][k][t];
            o0[t] = 4.0f * q0 - 5.0f * q2 + q4;
            o1[t] = -4.0f * (q1 + q2) + q3 + q4;
            o2[t] = 4.0f * (q1 - q2) - q3 + q4;
            o3[t] = 2.0f * (q3 - q1) - q2 + q4;
            o4[t] = 2.0f * (q1 - q3) - q2 + q4;
            o5[t] = 4.0f * q1 - 5.0f * q3 + q5;
        }
    }
}

/* a block of m (36, oc, tiles) -> the rows of y under it, A^T m A */
CPU_WIDEST_VECTORS static void outputs4(float rows[][WINO_SPAN], float *in, int64_t nb, int64_t stride)
{
    WINO_ACROSS_TILES
    for (int64_t t = 0; t < nb; t++) {
        float s[4][6]; /* A^T m */
        for (int k = 0; k < 6; k++) {
            float m0 = in[(0 * 6 + k) * stride + t], m1 = in[(1 * 6 + k) * stride + t];
            float m2 = in[(2 * 6 + k) * stride + t], m3 = in[(3 * 6 + k) * stride + t];
            float m4 = in[(4 * 6 + k) * stride + t], m5 = in[(5 * 6 + k) * stride + t];
            s[0][k] = m0 + m1 + m2 + m3 + m4;
            s[1][k] = m1 - m2 + 2.0f * (m3 - m4);
            s[2][k] = m1 + m2 + 4.0f * (m3 + m4);
            s[3][k] = m1 - m2 + 8.0f * (m3 - m4) + m5;
        }
        for (int i = 0; i < 4; i++) { /* (A^T m) A */
            const float *si = s[i];
            rows[i][4 * t + 0] = si[0] + si[1] + si[2] + si[3] + si[4];
            rows[i][4 * t + 1] = si[1] - si[2] + 2.0f * (si[3] - si[4]);
            rows[i][4 * t + 2] = si[1] + si[2] + 4.0f * (si[3] + si[4]);
            rows[i][4 * t + 3] = si[1] - si[2] + 8.0f * (si[3] - si[4]) + si[5];
        }
    }
}

/* the rows of dy under a block -> m (36, oc, tiles), A dy A^T */
CPU_WIDEST_VECTORS static void output_grads4(float rows[][WINO_SPAN], float *out, int64_t nb, int64_t stride)
{
    WINO_ACROSS_TILES
    for (int64_t t = 0; t < nb; t++) {
        float r[6][4]; /* A dy */
        for (int k = 0; k < 4; k++) {
            float y0 = rows[0][4 * t + k], y1 = rows[1][4 * t + k];
            float y2 = rows[2][4 * t + k], y3 = rows[3][4 * t + k];
            r[0][k] = y0;
            r[1][k] = y0 + y1 + y2 + y3;
            r[2][k] = y0 - y1 + y2 - y3;
            r[3][k] = y0 + 2.0f * y1 + 4.0f * y2 + 8.0f * y3;
            r[4][k] = y0 - 2.0f * y1 + 4.0f * y2 - 8.0f * y3;
            r[5][k] = y3;
        }
        for (int i = 0; i < 6; i++) { /* (A dy) A^T */
            const float *ri = r[i];
            out[(i * 6 + 0) * stride + t] = ri[0];
            out[(i * 6 + 1) * stride + t] = ri[0] + ri[1] + ri[2] + ri[3];
            out[(i * 6 + 2) * stride + t] = ri[0] - ri[1] + ri[2] - ri[3];
            out[(i * 6 + 3) * stride + t] = ri[0] + 2.0f * ri[1] + 4.0f * ri[2] + 8.0f * ri[3];
            out[(i * 6 + 4) * stride + t] = ri[0] - 2.0f * ri[1] + 4.0f * ri[2] - 8.0f * ri[3];
            out[(i * 6 + 5) * stride + t] = ri[3];
        }
    }
}

const struct wino_kind cpu_winograd_f4 = {.out = 4,
                                          .positions = P,
                                          .inputs = inputs4,
                                          .outputs = outputs4,
                                          .output_grads = output_grads4,
                                          .filter = filter_tile4,
                                          .filter_grad = filter_grad4};
