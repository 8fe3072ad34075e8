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
 * The gradients are the same computation's adjoint, term by term, so all
 * three passes share one tiling and any padding up to 2 (a tile reaching
 * past x reads zeros, and its gradient there is dropped):
 *   input grad:  dM = A dY A^T,  dV = U^T dM (per position),  dx += B dV B^T
 *   weight grad: dU = dM V^T (summed over tiles),  dw = G^T dU G
 *
 * Work goes in groups of images whose transformed tiles take about 4 MiB,
 * so that the products read them while they are still in the cache; the
 * buffer is the device's, kept from call to call (no malloc per call).
 * The transforms run one task per (image, channel) plane on the pool;
 * the input gradient's tiles overlap, and one plane per task keeps their
 * additions race-free and in one order (the same bits every run).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-impl.h"

#define POSITIONS 16                        /* a 4x4 transformed tile */
#define GROUP_FLOATS ((int64_t)1 << 20)     /* transformed tiles of one group of images */

struct wino {
    const struct ember_winograd *c;
    int64_t tiles_w, tiles; /* tiles along a row, and in an image */
    int64_t img0, tile_count; /* the group: its first image, its tiles (images * tiles) */
    const float *src;
    float *dst;
    float *u, *v, *m; /* (16, oc, c), (16, c, tile_count), (16, oc, tile_count) */
};

/* ------------------------------------------------------- the transforms */

/* out = B^T d B, d a 4x4 tile; B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] */
static inline void input_tile(const float d[16], float out[16])
{
    float r[16];
    for (int j = 0; j < 4; j++) {
        r[0 * 4 + j] = d[0 * 4 + j] - d[2 * 4 + j];
        r[1 * 4 + j] = d[1 * 4 + j] + d[2 * 4 + j];
        r[2 * 4 + j] = d[2 * 4 + j] - d[1 * 4 + j];
        r[3 * 4 + j] = d[1 * 4 + j] - d[3 * 4 + j];
    }
    for (int i = 0; i < 4; i++) {
        const float *ri = r + i * 4;
        out[i * 4 + 0] = ri[0] - ri[2];
        out[i * 4 + 1] = ri[1] + ri[2];
        out[i * 4 + 2] = ri[2] - ri[1];
        out[i * 4 + 3] = ri[1] - ri[3];
    }
}

/* dd = B x B^T, the adjoint of input_tile */
static inline void input_tile_adjoint(const float x[16], float dd[16])
{
    float z[16];
    for (int j = 0; j < 4; j++) {
        z[0 * 4 + j] = x[0 * 4 + j];
        z[1 * 4 + j] = x[1 * 4 + j] - x[2 * 4 + j] + x[3 * 4 + j];
        z[2 * 4 + j] = -x[0 * 4 + j] + x[1 * 4 + j] + x[2 * 4 + j];
        z[3 * 4 + j] = -x[3 * 4 + j];
    }
    for (int i = 0; i < 4; i++) {
        const float *zi = z + i * 4;
        dd[i * 4 + 0] = zi[0];
        dd[i * 4 + 1] = zi[1] - zi[2] + zi[3];
        dd[i * 4 + 2] = -zi[0] + zi[1] + zi[2];
        dd[i * 4 + 3] = -zi[3];
    }
}

/* u = G g G^T, g a 3x3 filter; G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
static inline void filter_tile(const float g[9], float u[16])
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
static inline void filter_tile_adjoint(const float x[16], float dg[9])
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

/* y = A^T m A, 2x2 from 4x4; A^T = [1 1 1 0; 0 1 -1 -1] */
static inline void output_tile(const float m[16], float y[4])
{
    float s[8];
    for (int j = 0; j < 4; j++) {
        s[0 * 4 + j] = m[0 * 4 + j] + m[1 * 4 + j] + m[2 * 4 + j];
        s[1 * 4 + j] = m[1 * 4 + j] - m[2 * 4 + j] - m[3 * 4 + j];
    }
    for (int i = 0; i < 2; i++) {
        const float *si = s + i * 4;
        y[i * 2 + 0] = si[0] + si[1] + si[2];
        y[i * 2 + 1] = si[1] - si[2] - si[3];
    }
}

/* m = A y A^T, the adjoint of output_tile */
static inline void output_tile_adjoint(const float y[4], float m[16])
{
    float r[8]; /* A y, 4x2 */
    for (int j = 0; j < 2; j++) {
        r[0 * 2 + j] = y[j];
        r[1 * 2 + j] = y[j] + y[2 + j];
        r[2 * 2 + j] = y[j] - y[2 + j];
        r[3 * 2 + j] = -y[2 + j];
    }
    for (int i = 0; i < 4; i++) {
        const float *ri = r + i * 2;
        m[i * 4 + 0] = ri[0];
        m[i * 4 + 1] = ri[0] + ri[1];
        m[i * 4 + 2] = ri[0] - ri[1];
        m[i * 4 + 3] = -ri[1];
    }
}

/* ------------------------------------------------ the passes over planes */

/* x planes of the group -> v (16, c, tiles): plane = image * c + ci */
static void transform_inputs(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t stride = g->c * j->tile_count;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / g->c, ci = plane % g->c;
        const float *x = j->src + ((j->img0 + img) * g->c + ci) * g->h * g->w;
        float *v = j->v + ci * j->tile_count + img * j->tiles;
        for (int64_t t = 0; t < j->tiles; t++) {
            int64_t y0 = 2 * (t / j->tiles_w) - g->pad, x0 = 2 * (t % j->tiles_w) - g->pad;
            float d[16], out[16];
            if (y0 >= 0 && x0 >= 0 && y0 + 4 <= g->h && x0 + 4 <= g->w) {
                for (int i = 0; i < 4; i++)
                    for (int k = 0; k < 4; k++)
                        d[i * 4 + k] = x[(y0 + i) * g->w + x0 + k];
            } else {
                for (int i = 0; i < 4; i++)
                    for (int k = 0; k < 4; k++) {
                        int64_t yy = y0 + i, xx = x0 + k;
                        d[i * 4 + k] = yy >= 0 && yy < g->h && xx >= 0 && xx < g->w ? x[yy * g->w + xx] : 0.0f;
                    }
            }
            input_tile(d, out);
            for (int pos = 0; pos < POSITIONS; pos++)
                v[pos * stride + t] = out[pos];
        }
    }
}

/* m (16, oc, tiles) -> y planes of the group, + beta * y: plane = image * oc + co */
static void transform_outputs(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, stride = oc * j->tile_count;
    bool add = j->c->beta != 0.0f;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / oc, co = plane % oc;
        float *y = j->dst + ((j->img0 + img) * oc + co) * g->oh * g->ow;
        const float *m = j->m + co * j->tile_count + img * j->tiles;
        for (int64_t t = 0; t < j->tiles; t++) {
            int64_t y0 = 2 * (t / j->tiles_w), x0 = 2 * (t % j->tiles_w);
            float in[16], out[4];
            for (int pos = 0; pos < POSITIONS; pos++)
                in[pos] = m[pos * stride + t];
            output_tile(in, out);
            for (int i = 0; i < 2 && y0 + i < g->oh; i++)
                for (int k = 0; k < 2 && x0 + k < g->ow; k++) {
                    float *at = y + (y0 + i) * g->ow + x0 + k;
                    *at = add ? *at + out[i * 2 + k] : out[i * 2 + k];
                }
        }
    }
}

/* dy planes of the group -> m (16, oc, tiles): plane = image * oc + co */
static void transform_output_grads(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, stride = oc * j->tile_count;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / oc, co = plane % oc;
        const float *dy = j->src + ((j->img0 + img) * oc + co) * g->oh * g->ow;
        float *m = j->m + co * j->tile_count + img * j->tiles;
        for (int64_t t = 0; t < j->tiles; t++) {
            int64_t y0 = 2 * (t / j->tiles_w), x0 = 2 * (t % j->tiles_w);
            float in[4], out[16];
            for (int i = 0; i < 2; i++)
                for (int k = 0; k < 2; k++)
                    in[i * 2 + k] = y0 + i < g->oh && x0 + k < g->ow ? dy[(y0 + i) * g->ow + x0 + k] : 0.0f;
            output_tile_adjoint(in, out);
            for (int pos = 0; pos < POSITIONS; pos++)
                m[pos * stride + t] = out[pos];
        }
    }
}

/* v (16, c, tiles) -> dx planes of the group, each tile's 4x4 added where
 * it lies inside x: plane = image * c + ci */
static void transform_input_grads(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t stride = g->c * j->tile_count;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / g->c, ci = plane % g->c;
        float *dx = j->dst + ((j->img0 + img) * g->c + ci) * g->h * g->w;
        const float *v = j->v + ci * j->tile_count + img * j->tiles;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t t = 0; t < j->tiles; t++) {
            int64_t y0 = 2 * (t / j->tiles_w) - g->pad, x0 = 2 * (t % j->tiles_w) - g->pad;
            float in[16], dd[16];
            for (int pos = 0; pos < POSITIONS; pos++)
                in[pos] = v[pos * stride + t];
            input_tile_adjoint(in, dd);
            for (int i = 0; i < 4; i++) {
                int64_t yy = y0 + i;
                if (yy < 0 || yy >= g->h)
                    continue;
                for (int k = 0; k < 4; k++) {
                    int64_t xx = x0 + k;
                    if (xx >= 0 && xx < g->w)
                        dx[yy * g->w + xx] += dd[i * 4 + k];
                }
            }
        }
    }
}

/* w (oc, c, 3, 3) -> u (16, oc, c): item = co * c + ci */
static void transform_filters(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    int64_t count = j->c->oc * j->c->g.c;
    for (int64_t item = begin; item < end; item++) {
        float u[16];
        filter_tile(j->src + item * 9, u);
        for (int pos = 0; pos < POSITIONS; pos++)
            j->u[pos * count + item] = u[pos];
    }
}

/* u (16, oc, c) -> dw (oc, c, 3, 3), + beta * dw */
static void transform_filter_grads(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    int64_t count = j->c->oc * j->c->g.c;
    bool add = j->c->beta != 0.0f;
    for (int64_t item = begin; item < end; item++) {
        float in[16], dg[9];
        for (int pos = 0; pos < POSITIONS; pos++)
            in[pos] = j->u[pos * count + item];
        filter_tile_adjoint(in, dg);
        float *dw = j->dst + item * 9;
        for (int k = 0; k < 9; k++)
            dw[k] = add ? dw[k] + dg[k] : dg[k];
    }
}

/* ------------------------------------------------------------ the call */

static ember_ptr host_ptr(float *p)
{
    return (ember_ptr){.buf = p, .off = 0};
}

/* The 16 products of a group, one batched call: per position,
 *   forward      m = u (oc, c) @ v (c, tiles)
 *   input grad   v = u^T (c, oc) @ m (oc, tiles)
 *   weight grad  u += m (oc, tiles) @ v^T (tiles, c) */
static ember_status multiply(struct cpu_device *d, const struct wino *j)
{
    int64_t oc = j->c->oc, c = j->c->g.c, tiles = j->tile_count;
    struct ember_gemm gm = {.batch = POSITIONS, .alpha = 1.0f};
    switch (j->c->pass) {
    case EMBER_CONV_FORWARD:
        gm.m = oc, gm.n = tiles, gm.k = c, gm.lda = c, gm.ldb = tiles, gm.ldc = tiles;
        gm.stride_a = oc * c, gm.stride_b = c * tiles, gm.stride_c = oc * tiles;
        return cpu_sgemm(d, &gm, host_ptr(j->u), host_ptr(j->v), host_ptr(j->m));
    case EMBER_CONV_INPUT_GRAD:
        gm.trans_a = true, gm.m = c, gm.n = tiles, gm.k = oc, gm.lda = c, gm.ldb = tiles, gm.ldc = tiles;
        gm.stride_a = oc * c, gm.stride_b = oc * tiles, gm.stride_c = c * tiles;
        return cpu_sgemm(d, &gm, host_ptr(j->u), host_ptr(j->m), host_ptr(j->v));
    case EMBER_CONV_WEIGHT_GRAD:
        gm.trans_b = true, gm.m = oc, gm.n = c, gm.k = tiles, gm.lda = tiles, gm.ldb = tiles, gm.ldc = c;
        gm.stride_a = oc * tiles, gm.stride_b = c * tiles, gm.stride_c = oc * c, gm.beta = 1.0f;
        return cpu_sgemm(d, &gm, host_ptr(j->m), host_ptr(j->v), host_ptr(j->u));
    }
    return EMBER_OK;
}

ember_status cpu_conv_winograd(void *dev, const struct ember_winograd *c, ember_ptr x, ember_ptr w, ember_ptr y)
{
    struct cpu_device *d = dev;
    const struct ember_conv_geom *g = &c->g;
    if (g->kh != 3 || g->kw != 3 || g->stride != 1 || g->pad < 0 || g->pad > 2 || g->oh != g->h + 2 * g->pad - 2 ||
        g->ow != g->w + 2 * g->pad - 2 || g->oh < 1 || g->ow < 1)
        return d->host.fail(d->host.ctx, EMBER_ERR_ARG,
                            "conv_winograd takes 3x3 kernels at stride 1 with padding 0 to 2; got %lldx%lld, "
                            "stride %lld, padding %lld",
                            (long long)g->kh, (long long)g->kw, (long long)g->stride, (long long)g->pad);
    int64_t tiles_h = (g->oh + 1) / 2, tiles_w = (g->ow + 1) / 2, tiles = tiles_h * tiles_w;
    int64_t per_image = POSITIONS * (g->c + c->oc) * tiles;
    int64_t group = GROUP_FLOATS / per_image;
    group = group < 1 ? 1 : group > g->n ? g->n : group;
    if (g->n == 0 && c->pass != EMBER_CONV_WEIGHT_GRAD)
        return EMBER_OK;

    /* u, v and m, each starting on a 64-byte line */
    size_t nu = (size_t)(POSITIONS * c->oc * g->c + 15) & ~(size_t)15, ntiles = (size_t)(group * tiles);
    size_t nv = ((size_t)(POSITIONS * g->c) * ntiles + 15) & ~(size_t)15, nm = (size_t)(POSITIONS * c->oc) * ntiles;
    if (d->scratch_floats < nu + nv + nm) {
        free(d->scratch);
        d->scratch_floats = 0;
        d->scratch = aligned_alloc(64, (nu + nv + nm + 15) / 16 * 64);
        if (!d->scratch)
            return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM, "conv_winograd: no memory for %lld images' tiles",
                                (long long)group);
        d->scratch_floats = nu + nv + nm;
    }
    float *u = d->scratch, *v = u + nu, *m = v + nv;
    struct wino j = {.c = c, .tiles_w = tiles_w, .tiles = tiles, .u = u, .v = v, .m = m};
    int64_t filter_grain = 4096, in_grain = cpu_plane_grain(16 * tiles), out_grain = in_grain;
    if (c->pass == EMBER_CONV_WEIGHT_GRAD) {
        memset(u, 0, nu * sizeof *u);
    } else {
        j.src = cpu_f32(w);
        cpu_parallel_for(d->pool, c->oc * g->c, filter_grain, transform_filters, &j);
    }
    ember_status st = EMBER_OK;
    for (int64_t img0 = 0; img0 < g->n && st == EMBER_OK; img0 += group) {
        int64_t images = g->n - img0 < group ? g->n - img0 : group;
        j.img0 = img0, j.tile_count = images * tiles;
        if (c->pass != EMBER_CONV_INPUT_GRAD) { /* the inputs' tiles */
            j.src = cpu_f32(x);
            cpu_parallel_for(d->pool, images * g->c, in_grain, transform_inputs, &j);
        }
        if (c->pass != EMBER_CONV_FORWARD) { /* the output gradient's tiles */
            j.src = cpu_f32(y);
            cpu_parallel_for(d->pool, images * c->oc, out_grain, transform_output_grads, &j);
        }
        st = multiply(d, &j);
        if (st == EMBER_OK && c->pass == EMBER_CONV_FORWARD) {
            j.dst = cpu_f32(y);
            cpu_parallel_for(d->pool, images * c->oc, out_grain, transform_outputs, &j);
        } else if (st == EMBER_OK && c->pass == EMBER_CONV_INPUT_GRAD) {
            j.dst = cpu_f32(x);
            cpu_parallel_for(d->pool, images * g->c, in_grain, transform_input_grads, &j);
        }
    }
    if (st == EMBER_OK && c->pass == EMBER_CONV_WEIGHT_GRAD) {
        j.dst = cpu_f32(w);
        cpu_parallel_for(d->pool, c->oc * g->c, filter_grain, transform_filter_grads, &j);
    }
    return st;
}
