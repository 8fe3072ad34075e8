/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-winograd.c — 3x3 stride-1 convolutions by Winograd's
 * minimal filtering F(2x2, 3x3), forward and both gradients.
 *
 * Each 2x2 block of the output is computed from the 4x4 block of the
 * padded input under it (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015):
 *
 *   Y = A^T [ (G g G^T) . (B^T d B) ] A
 *
 * g the 3x3 filter, d the 4x4 input tile, . the elementwise product, summed
 * over input channels. Summed over channels, the elementwise product is,
 * at each of the 16 tile positions, a matrix product: (oc x c) transformed
 * filters by (c x tiles) transformed inputs. So a convolution is three
 * passes: transform the inputs (additions only), 16 OpenBLAS sgemms (one
 * batched call, cpu-gemm.c, threads split the 16), transform the products
 * back. 16 multiplications per 4 outputs against the direct 36: 2.25
 * times less arithmetic, the only way past a compute bound the products
 * already run near (docs/benchmarks.md).
 *
 * The input gradient is itself a forward pass: dy convolved with the
 * filters turned 180 degrees and transposed (oc in, c out), padded by
 * 2 - pad, which is why the padding must be 2 or less. (The forward pass's
 * adjoint, dx += B (U^T A dY A^T) B^T tile by tile, is the same arithmetic
 * but adds overlapping tiles into dx, a scatter the forward pass never
 * needs; this way the input gradient runs the forward pass's loops.) The
 * weight gradient is the forward pass's adjoint, term by term:
 * dU = (A dY A^T) V^T summed over the tiles, dw = G^T dU G.
 *
 * Here: the passes over (image, channel) planes both tile sizes run, a
 * walk over blocks of tiles and the row copy they read through, and the
 * F(2x2, 3x3) transforms; the groups, the products and the passes' order
 * are cpu-winograd-driver.c's.
 */
#include <string.h>

#include "cpu-winograd-impl.h"

#define POSITIONS 16 /* a 4x4 transformed tile */

/* ------------------------------------------------------- the transforms */

/* u = G g G^T, g a 3x3 filter; G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
static void filter_tile(const float *g, float *u)
{
    float r[12]; /* G g, 4x3 */
    for (int j = 0; j < 3; j++) {
        r[0 * 3 + j] = g[0 * 3 + j];
        r[1 * 3 + j] = 0.5f * (g[0 * 3 + j] + g[1 * 3 + j] + g[2 * 3 + j]);
        r[2 * 3 + j] = 0.5f * (g[0 * 3 + j] - g[1 * 3 + j] + g[2 * 3 + j]);
        r[3 * 3 + j] = g[2 * 3 + j];
    }
    for (int i = 0; i < 4; i++) {
        const float *ri = r + i * 3;
        u[i * 4 + 0] = ri[0];
        u[i * 4 + 1] = 0.5f * (ri[0] + ri[1] + ri[2]);
        u[i * 4 + 2] = 0.5f * (ri[0] - ri[1] + ri[2]);
        u[i * 4 + 3] = ri[2];
    }
}

/* dg = G^T x G, the adjoint of filter_tile */
static void filter_tile_adjoint(const float *x, float *dg)
{
    float r[12]; /* G^T x, 3x4 */
    for (int j = 0; j < 4; j++) {
        float half_sum = 0.5f * (x[1 * 4 + j] + x[2 * 4 + j]);
        r[0 * 4 + j] = x[0 * 4 + j] + half_sum;
        r[1 * 4 + j] = 0.5f * (x[1 * 4 + j] - x[2 * 4 + j]);
        r[2 * 4 + j] = half_sum + x[3 * 4 + j];
    }
    for (int i = 0; i < 3; i++) {
        const float *ri = r + i * 4;
        float half_sum = 0.5f * (ri[1] + ri[2]);
        dg[i * 3 + 0] = ri[0] + half_sum;
        dg[i * 3 + 1] = 0.5f * (ri[1] - ri[2]);
        dg[i * 3 + 2] = half_sum + ri[3];
    }
}

/* ------------------------------------------------ the passes over planes
 * (cpu-winograd-impl.h says how they walk) */

/* rows[i][k] = the plane's row y0 + i, column x0 + k, 0 outside it, for
 * i < count and k < len */
static void read_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int count,
                      int64_t len, float rows[][WINO_SPAN])
{
    for (int i = 0; i < count; i++) {
        int64_t yy = y0 + i;
        if (yy < 0 || yy >= h) {
            memset(rows[i], 0, (size_t)len * sizeof rows[i][0]);
            continue;
        }
        const float *row = plane + yy * w;
        for (int64_t k = 0; k < len; k++) {
            int64_t xx = x0 + k;
            rows[i][k] = xx >= 0 && xx < w ? row[xx] : 0.0f;
        }
    }
}

/* Its way back: the `count` rows of a strip of output tiles into an (h, w)
 * plane at (y0, x0), `len` columns of them, rows past h left out; added to
 * what is there when `add` (the channel groups after the first), else
 * written. */
static void store_rows(float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int count, int64_t len,
                       float rows[][WINO_SPAN], bool add)
{
    for (int i = 0; i < count && y0 + i < h; i++) {
        float *out = plane + (y0 + i) * w + x0;
        if (add)
            for (int64_t k = 0; k < len; k++)
                out[k] += rows[i][k];
        else
            memcpy(out, rows[i], (size_t)len * sizeof *out);
    }
}

enum pass { INPUTS, OUTPUTS, OUTPUT_GRADS };

/* Every block of the group's planes [begin, end): x's (INPUTS) read into
 * rows, each block's transform to v; m's blocks to rows, written into y's
 * (OUTPUTS); dy's read into rows, to m (OUTPUT_GRADS) */
static void each_block(const struct wino *j, int64_t begin, int64_t end, enum pass pass)
{
    const struct ember_conv_geom *g = &j->c->g;
    const struct wino_kind *kind = j->kind;
    bool inputs = pass == INPUTS, add = j->c->beta != 0.0f;
    int64_t channels = inputs ? g->c : j->c->oc, stride = channels * j->tile_count;
    int64_t h = inputs ? g->h : g->oh, w = inputs ? g->w : g->ow, pad = inputs ? g->pad : 0;
    int64_t n = kind->out, tiles_h = j->tiles / j->tiles_w;
    wino_block_fn *transform = inputs ? kind->inputs : pass == OUTPUTS ? kind->outputs : kind->output_grads;
    float rows[6][WINO_SPAN]; /* out + 2 at most, for F(4x4) */
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / channels, ch = plane % channels, at = ((j->img0 + img) * channels + ch) * h * w;
        float *tiles = (inputs ? j->v : j->m) + ch * j->tile_count + img * j->tiles;
        for (int64_t ty = 0; ty < tiles_h; ty++)
            for (int64_t tx0 = 0; tx0 < j->tiles_w; tx0 += WINO_BLOCK) {
                int64_t nb = j->tiles_w - tx0 < WINO_BLOCK ? j->tiles_w - tx0 : WINO_BLOCK;
                int64_t y0 = n * ty - pad, x0 = n * tx0 - pad;
                float *block = tiles + ty * j->tiles_w + tx0;
                if (pass == OUTPUTS) {
                    transform(rows, block, nb, stride);
                    store_rows(j->dst + at, h, w, y0, x0, (int)n, w - x0 < n * nb ? w - x0 : n * nb, rows,
                               add);
                } else { /* an input tile is out + 2 a side, overlapping the next by 2 */
                    read_rows(j->src + at, h, w, y0, x0, (int)(inputs ? n + 2 : n), n * nb + (inputs ? 2 : 0),
                              rows);
                    transform(rows, block, nb, stride);
                }
            }
    }
}

void cpu_winograd_inputs(void *p, int64_t begin, int64_t end) { each_block(p, begin, end, INPUTS); }
void cpu_winograd_outputs(void *p, int64_t begin, int64_t end) { each_block(p, begin, end, OUTPUTS); }
void cpu_winograd_output_grads(void *p, int64_t begin, int64_t end)
{
    each_block(p, begin, end, OUTPUT_GRADS);
}

/* the rows of x under a block -> v (16, c, tiles), B^T d B */
CPU_WIDEST_VECTORS static void inputs2(float rows[][WINO_SPAN], float *out, int64_t nb, int64_t stride)
{
    WINO_ACROSS_TILES
    for (int64_t t = 0; t < nb; t++) {
        float q[4][4]; /* d B, row by row */
        for (int i = 0; i < 4; i++) {
            const float *r = rows[i] + 2 * t;
            q[i][0] = r[0] - r[2];
            q[i][1] = r[1] + r[2];
            q[i][2] = r[2] - r[1];
            q[i][3] = r[1] - r[3];
        }
        for (int k = 0; k < 4; k++) { /* B^T (d B) */
            out[(0 * 4 + k) * stride + t] = q[0][k] - q[2][k];
            out[(1 * 4 + k) * stride + t] = q[1][k] + q[2][k];
            out[(2 * 4 + k) * stride + t] = q[2][k] - q[1][k];
            out[(3 * 4 + k) * stride + t] = q[1][k] - q[3][k];
        }
    }
}

/* a block of m (16, oc, tiles) -> the rows of y under it, A^T m A */
CPU_WIDEST_VECTORS static void outputs2(float rows[][WINO_SPAN], float *in, int64_t nb, int64_t stride)
{
    WINO_ACROSS_TILES
    for (int64_t t = 0; t < nb; t++) {
        float s[2][4]; /* A^T m */
        for (int k = 0; k < 4; k++) {
            float m0 = in[(0 * 4 + k) * stride + t], m1 = in[(1 * 4 + k) * stride + t];
            float m2 = in[(2 * 4 + k) * stride + t], m3 = in[(3 * 4 + k) * stride + t];
            s[0][k] = m0 + m1 + m2;
            s[1][k] = m1 - m2 - m3;
        }
        for (int i = 0; i < 2; i++) { /* (A^T m) A */
            rows[i][2 * t] = s[i][0] + s[i][1] + s[i][2];
            rows[i][2 * t + 1] = s[i][1] - s[i][2] - s[i][3];
        }
    }
}

/* the rows of dy under a block -> m (16, oc, tiles), A dy A^T */
CPU_WIDEST_VECTORS static void output_grads2(float rows[][WINO_SPAN], float *out, int64_t nb, int64_t stride)
{
    WINO_ACROSS_TILES
    for (int64_t t = 0; t < nb; t++) {
        float r[4][2]; /* A dy */
        for (int k = 0; k < 2; k++) {
            float y0 = rows[0][2 * t + k], y1 = rows[1][2 * t + k];
            r[0][k] = y0;
            r[1][k] = y0 + y1;
            r[2][k] = y0 - y1;
            r[3][k] = -y1;
        }
        for (int i = 0; i < 4; i++) { /* (A dy) A^T */
            out[(i * 4 + 0) * stride + t] = r[i][0];
            out[(i * 4 + 1) * stride + t] = r[i][0] + r[i][1];
            out[(i * 4 + 2) * stride + t] = r[i][0] - r[i][1];
            out[(i * 4 + 3) * stride + t] = -r[i][1];
        }
    }
}

const struct wino_kind cpu_winograd_f2 = {.out = 2,
                                          .positions = POSITIONS,
                                          .inputs = inputs2,
                                          .outputs = outputs2,
                                          .output_grads = output_grads2,
                                          .filter = filter_tile,
                                          .filter_grad = filter_tile_adjoint};
